//! The charts: labelled axes and legends, failures marked, the sweep axis and sections per swept value.

use super::*;

#[test]
fn every_chart_is_written_with_labelled_axes_and_legends() {
    let dir = fixture_copy("charts");
    let html_path = write_report(&dir).unwrap();
    assert_eq!(html_path, dir.join("report.html"));
    let mut names: Vec<String> = fs::read_dir(dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, CHARTS);

    let expect = [
        (
            "connections-response-time.svg",
            "concurrent connections",
            "response time (ms)",
        ),
        (
            "connections-throughput.svg",
            "concurrent connections",
            "throughput (requests/s)",
        ),
        (
            "connections-cpu.svg",
            "concurrent connections",
            "server CPU (% of one core)",
        ),
        (
            "connections-memory-per-connection.svg",
            "concurrent connections",
            "server RSS per connection (KiB)",
        ),
        (
            "connections-latency-percentiles.svg",
            "percentile (log scale of 1/(1−p))",
            "response time (ms)",
        ),
        (
            "connections-timeline-p99.svg",
            "time since the step started (s)",
            "p99 response time (ms)",
        ),
        (
            "connections-timeline-bytes.svg",
            "time since the step started (s)",
            "MiB echoed per second",
        ),
        (
            "connections-timeline-cpu.svg",
            "time since the step started (s)",
            "server CPU (% of one core)",
        ),
        (
            "connections-timeline-memory.svg",
            "time since the step started (s)",
            "server RSS (MiB)",
        ),
    ];
    for (file, x_desc, y_desc) in expect {
        let texts = svg_texts(&read(&dir.join("charts").join(file)));
        assert!(
            texts.iter().any(|t| t == x_desc),
            "{file}: no x axis label '{x_desc}'"
        );
        assert!(
            texts.iter().any(|t| t == y_desc),
            "{file}: no y axis label '{y_desc}'"
        );
    }
    for file in CHARTS {
        let svg = read(&dir.join("charts").join(file));
        let tag_end = svg.find('>').unwrap();
        let tag = &svg[svg.find("<svg").unwrap()..tag_end];
        assert!(tag.contains("viewBox=\"0 0 960 "), "{file}: {tag}");
        assert!(!tag.contains(" width="), "{file} has a fixed width: {tag}");
        // Every model has a step folder, so every chart's legend (or, for the
        // bars, the axis) names all six, e.g. "epoll p99", "select (2000)".
        let texts = svg_texts(&svg);
        for model in fixture_models() {
            assert!(
                texts
                    .iter()
                    .any(|t| t.split(' ').next() == Some(model.as_str())),
                "{file}: legend or labels lack {model}: {texts:?}"
            );
        }
    }
    let legend = svg_texts(&read(&dir.join("charts/connections-response-time.svg")));
    for entry in [
        "threads p99",
        "threads p50",
        "tokio p99",
        "min–max of reps",
        "failed step (notes)",
    ] {
        assert!(
            legend.iter().any(|t| t == entry),
            "legend lacks {entry}: {legend:?}"
        );
    }
    // The percentile axis reads in percent.
    let pct = svg_texts(&read(
        &dir.join("charts/connections-latency-percentiles.svg"),
    ));
    for label in [
        "90%",
        "99%",
        "99.9%",
        "99.99%",
        "select (2000)",
        "epoll (4000)",
    ] {
        assert!(
            pct.iter().any(|t| t == label),
            "percentile chart lacks {label}: {pct:?}"
        );
    }
    // The bar chart writes each model's capacity above its bar.
    let bars = svg_texts(&read(&dir.join("charts/connections-max-connections.svg")));
    // Five bars at 4000, plus the y axis tick of that name.
    assert_eq!(bars.iter().filter(|t| *t == "4000").count(), 6, "{bars:?}");
    assert_eq!(bars.iter().filter(|t| *t == "1020").count(), 1, "{bars:?}");

    let html = read(&html_path);
    // Every chart once, beside one small picture per answer on the first screen.
    let answers = html.matches("<div class=\"answer\">").count();
    assert!(answers > 0);
    assert_eq!(html.matches("<svg").count(), CHARTS.len() + answers);
    assert!(
        !html.contains("<script"),
        "the page must not need JavaScript"
    );
    assert!(!html.contains("<?xml"));
    for forbidden in ["src=\"http", "href=\"http", "@import", "url("] {
        assert!(
            !html.contains(forbidden),
            "the page loads something: {forbidden}"
        );
    }
    assert!(html.contains("@media print"));
    let md = read(&dir.join("report.md"));
    for file in CHARTS {
        assert!(
            md.contains(&format!("](charts/{file})")),
            "report.md lacks {file}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failures_are_marked_on_the_charts_with_their_reason() {
    let dir = fixture_copy("marks");
    write_report(&dir).unwrap();
    for file in [
        "connections-response-time.svg",
        "connections-throughput.svg",
        "connections-cpu.svg",
        "connections-memory-per-connection.svg",
    ] {
        let texts = svg_texts(&read(&dir.join("charts").join(file)));
        let note = texts
            .iter()
            .position(|t| {
                t == "× 1 select at connections=2000: failed in 2 of 2 repetitions: 980 of \
                      2000 connections not established: server refused fd &gt;= FD_SETSIZE"
            })
            .unwrap_or_else(|| panic!("{file} does not explain the failed step: {texts:?}"));
        // The note's wrapped rest, and the numbered cross on the plot.
        assert_eq!(texts[note + 1], "(1024)");
        assert!(texts.iter().any(|t| t == "1"));
    }
    let bars = read(&dir.join("charts/connections-max-connections.svg"));
    assert!(bars.contains("select failed at connections=2000: 980 of 2000 connections"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_sweep_axis_falls_back_to_the_column_that_varies() {
    let dir = fixture_copy("size-sweep");
    for model in fixture_models() {
        let _ = fs::remove_dir_all(dir.join(model));
    }
    fs::write(
        dir.join("manifest.json"),
        "{\"scenario_name\": \"message-size\", \"models\": [\"epoll\", \"tokio\"]}",
    )
    .unwrap();
    // workers differs between models but not within one: it is not a sweep.
    let header = read(&fixture().join("results.csv"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut csv = header + "\n";
    for (model, workers, base) in [("epoll", 2, 40000.0), ("tokio", 4, 30000.0)] {
        for (i, size) in [1, 1024, 65536].iter().enumerate() {
            let thr = base / (i + 1) as f64;
            csv.push_str(&format!(
                "{model},c100-s{size},1,100,{size},0,,{workers},ok,,5.0,100,100,{},{thr},1.0,\
                 1000,1500,2000,3000,4000,0,0,0,50.0,1.0,1.5,8388608,83886.1,3,105,1,1,1,1,true\n",
                thr as u64 * 5
            ));
        }
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    write_report(&dir).unwrap();
    let throughput = read(&dir.join("charts/size-throughput.svg"));
    assert!(throughput.contains("message size (bytes)"));
    assert!(!dir.join("charts/workers-throughput.svg").exists());
    let md = read(&dir.join("report.md"));
    assert!(md.contains("## Message size sweep"));
    assert!(md.contains(
        "| Throughput | size=65536 | no difference: p = 1.00, n = 1 | — | — | — | — | — | 10,000 req/s | — |"
    ));
    fs::remove_dir_all(&dir).unwrap();
}

/// Connections x size: one section per value of the other axis (docs/report.md), each
/// with its own charts, and the verdict compares each at its heaviest point. Throughput
/// here is base x connections / 100, halved at 1024 bytes.
#[test]
fn two_swept_axes_give_one_section_per_value_of_the_other() {
    let dir = fixture_copy("two-axes");
    for model in fixture_models() {
        let _ = fs::remove_dir_all(dir.join(model));
    }
    fs::write(
        dir.join("manifest.json"),
        "{\"scenario_name\": \"grid\", \"models\": [\"epoll\", \"tokio\"]}",
    )
    .unwrap();
    let header = read(&fixture().join("results.csv"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    let throughput = |base: f64, conns: u64, size: u64| {
        base * conns as f64 / 100.0 / if size == 64 { 1.0 } else { 2.0 }
    };
    let mut csv = header + "\n";
    for (model, base) in [("epoll", 40000.0), ("tokio", 30000.0)] {
        for size in [64, 1024] {
            for conns in [10, 100] {
                let thr = throughput(base, conns, size);
                csv.push_str(&format!(
                    "{model},c{conns}-s{size},1,{conns},{size},0,,1,ok,,5.0,{conns},{conns},{},\
                     {thr},1.0,1000,1500,2000,3000,4000,0,0,0,50.0,1.0,1.5,8388608,83886.1,3,105,\
                     1,1,1,1,true\n",
                    thr as u64 * 5
                ));
            }
        }
    }
    fs::write(dir.join("results.csv"), csv).unwrap();
    write_report(&dir).unwrap();
    let md = read(&dir.join("report.md"));
    let sections: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("## ") && l.contains("sweep"))
        .collect();
    assert_eq!(
        sections,
        [
            "## Connections sweep (size=64)",
            "## Connections sweep (size=1024)",
            "## Message size sweep (connections=10)",
            "## Message size sweep (connections=100)",
        ]
    );
    for slug in [
        "connections-size64",
        "connections-size1024",
        "size-connections10",
        "size-connections100",
    ] {
        for figure in [
            "response-time",
            "throughput",
            "cpu",
            "memory-per-connection",
        ] {
            let chart = dir.join(format!("charts/{slug}-{figure}.svg"));
            assert!(chart.is_file(), "{} missing", chart.display());
        }
        let chart = read(&dir.join(format!("charts/{slug}-throughput.svg")));
        assert_eq!(legend(&chart), ["epoll", "tokio"], "{slug}");
    }
    assert!(!dir.join("charts/connections-throughput.svg").exists());
    // The verdict of each section, at its heaviest point, each with its baseline; one
    // repetition a model decides nothing.
    for (at, conns, size) in [
        ("connections=100", 100, 64),
        ("connections=100", 100, 1024),
        ("size=1024", 10, 1024),
        ("size=1024", 100, 1024),
    ] {
        let t = throughput(30000.0, conns, size) as u64;
        let tokio = if t >= 1000 {
            format!("{},{:03}", t / 1000, t % 1000)
        } else {
            t.to_string()
        };
        let row = format!(
            "| Throughput | {at} | no difference: p = 1.00, n = 1 | — | — | — | — | — | {tokio} req/s | — |"
        );
        assert!(md.contains(&row), "{row}\n{md}");
    }
    fs::remove_dir_all(&dir).unwrap();
}
