//! The echo check: what the bytes a connection received say about the bytes it sent. The
//! stream is the message repeated; every received byte must equal the sent byte at its place,
//! no more bytes may arrive than were sent, and a connection that ends leaves the messages
//! started but not wholly echoed as short echoes. Pure: no sockets, no clock.

/// Where one connection's echo stream stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EchoCursor {
    /// Bytes sent so far.
    pub sent: u64,
    /// Bytes received (and checked) so far.
    pub received: u64,
    /// The message being received already has a wrong byte.
    pub corrupt: bool,
}

/// What one read proved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EchoCheck {
    /// Bytes equal to the sent byte at their place.
    pub verified: u64,
    /// Messages this read completed (intact or not).
    pub completed: u64,
    /// Of those, messages with a wrong byte.
    pub mismatched: u64,
    /// More bytes arrived than were sent: not an echo of this stream. Nothing was consumed.
    pub too_many: bool,
}

impl EchoCursor {
    /// Checks `got`, the next bytes received, against `message` repeated, and calls
    /// `on_message(intact)` for each message it completes, in order.
    pub fn check(
        &mut self,
        message: &[u8],
        got: &[u8],
        mut on_message: impl FnMut(bool),
    ) -> EchoCheck {
        let size = message.len() as u64;
        let mut check = EchoCheck::default();
        if self.received + got.len() as u64 > self.sent {
            check.too_many = true;
            return check;
        }
        let mut done = 0;
        while done < got.len() {
            let offset = (self.received % size) as usize;
            let seg = (got.len() - done).min(message.len() - offset);
            let got = &got[done..done + seg];
            let want = &message[offset..offset + seg];
            if got == want {
                check.verified += seg as u64;
            } else {
                self.corrupt = true;
                check.verified += got.iter().zip(want).filter(|(a, b)| a == b).count() as u64;
            }
            done += seg;
            self.received += seg as u64;
            if self.received.is_multiple_of(size) {
                check.completed += 1;
                let intact = !std::mem::take(&mut self.corrupt);
                if !intact {
                    check.mismatched += 1;
                }
                on_message(intact);
            }
        }
        check
    }

    /// Messages started but not wholly echoed: short echoes if the connection ends now.
    pub fn unanswered(&self, message_len: u64) -> u64 {
        self.sent.div_ceil(message_len) - self.received / message_len
    }

    /// Everything sent has come back.
    pub fn is_settled(&self) -> bool {
        self.received == self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(sent: u64) -> EchoCursor {
        EchoCursor {
            sent,
            ..EchoCursor::default()
        }
    }

    #[test]
    fn an_exact_echo_in_pieces_verifies_every_byte() {
        let mut c = cursor(8);
        let mut messages = Vec::new();
        let first = c.check(b"abcd", b"abc", |ok| messages.push(ok));
        assert_eq!(
            first,
            EchoCheck {
                verified: 3,
                ..EchoCheck::default()
            }
        );
        assert_eq!(c.unanswered(4), 2);
        // One read may finish one message and start the next.
        let second = c.check(b"abcd", b"dabcd", |ok| messages.push(ok));
        assert_eq!(second.verified, 5);
        assert_eq!(second.completed, 2);
        assert_eq!(second.mismatched, 0);
        assert_eq!(messages, [true, true]);
        assert!(c.is_settled());
        assert_eq!(c.unanswered(4), 0);
    }

    #[test]
    fn a_wrong_byte_spoils_its_message_only() {
        let mut c = cursor(12);
        let mut messages = Vec::new();
        let check = c.check(b"abcd", b"abXdab", |ok| messages.push(ok));
        assert_eq!(check.verified, 5);
        assert_eq!(check.completed, 1);
        assert_eq!(check.mismatched, 1);
        assert!(!c.corrupt);
        // The corruption is remembered across reads until its message ends.
        c.check(b"abcd", b"Zd", |ok| messages.push(ok));
        c.check(b"abcd", b"abcd", |ok| messages.push(ok));
        assert_eq!(messages, [false, false, true]);
    }

    #[test]
    fn more_bytes_than_sent_are_not_an_echo() {
        let mut c = cursor(4);
        let check = c.check(b"abcd", b"abcde", |_| panic!("no message completes"));
        assert!(check.too_many);
        assert_eq!(c, cursor(4), "nothing consumed");
    }

    #[test]
    fn unanswered_messages_are_short_echoes() {
        let mut c = cursor(10); // two whole messages of 4 and half a third
        c.check(b"abcd", b"abcdab", |_| {});
        assert_eq!(c.unanswered(4), 2);
        assert!(!c.is_settled());
    }
}
