//! NUMA sockets: the socket whose memory an lcore uses, and one copy of a
//! thing per socket with a forwarding lcore. C l3fwd builds its lookup
//! tables once per such socket (`setup_lpm(socketid)`), so that every
//! lcore reads local memory on a server of several sockets; so do we.

use dpdk::Eal;

/// The socket whose memory `lcore` uses: its own, or 0 with `--no-numa`
/// (C's `numa_on = 0`). An lcore EAL does not know is on socket 0.
pub fn socket_of(eal: &Eal, no_numa: bool, lcore: u32) -> u32 {
    if no_numa {
        0
    } else {
        eal.lcore_socket(lcore).unwrap_or(0)
    }
}

/// One `T` per socket, each for the lcores on that socket.
#[derive(Debug, Clone)]
pub struct PerSocket<T> {
    /// By ascending socket; never empty.
    copies: Vec<(u32, T)>,
}

impl<T> PerSocket<T> {
    /// A copy made by `make` for each socket that one of `lcores` is on
    /// (`socket` gives it), or for socket 0 if there are no lcores; each
    /// socket once.
    pub fn build<E>(
        lcores: &[u32],
        socket: impl Fn(u32) -> u32,
        mut make: impl FnMut(u32) -> Result<T, E>,
    ) -> Result<PerSocket<T>, E> {
        let mut sockets: Vec<u32> = lcores.iter().map(|&l| socket(l)).collect();
        sockets.sort_unstable();
        sockets.dedup();
        if sockets.is_empty() {
            sockets.push(0);
        }
        let copies = sockets
            .into_iter()
            .map(|s| make(s).map(|t| (s, t)))
            .collect::<Result<_, E>>()?;
        Ok(PerSocket { copies })
    }

    /// The copy for an lcore on `socket`; the first one if the socket has
    /// none (it has no forwarding lcore, so this is not a lookup's).
    pub fn on(&self, socket: u32) -> &T {
        let found = self.copies.iter().find(|(s, _)| *s == socket);
        &found.unwrap_or(&self.copies[0]).1
    }

    /// The first copy: the one the control thread reads.
    pub fn first(&self) -> &T {
        &self.copies[0].1
    }

    pub fn first_mut(&mut self) -> &mut T {
        &mut self.copies[0].1
    }

    /// The sockets that have a copy, ascending.
    pub fn sockets(&self) -> impl Iterator<Item = u32> + '_ {
        self.copies.iter().map(|(s, _)| *s)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.copies.iter().map(|(_, t)| t)
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.copies.iter_mut().map(|(_, t)| t)
    }

    /// `f` of each copy, for the same sockets.
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> PerSocket<U> {
        PerSocket {
            copies: self.copies.iter().map(|(s, t)| (*s, f(t))).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lcores 0-3 on socket 0 and 4-7 on socket 1, as on a small two-socket
    /// server: this machine has one socket, so the plan is tested here.
    fn two_sockets(lcore: u32) -> u32 {
        lcore / 4
    }

    fn built(lcores: &[u32]) -> PerSocket<String> {
        PerSocket::build(lcores, two_sockets, |s| Ok::<_, ()>(format!("tables on {s}"))).unwrap()
    }

    #[test]
    fn a_copy_for_each_socket_with_a_forwarding_lcore_and_no_other() {
        assert_eq!(built(&[1, 5, 6, 2]).sockets().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(built(&[5, 6]).sockets().collect::<Vec<_>>(), [1]);
        assert_eq!(built(&[]).sockets().collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn each_lcore_reads_its_own_sockets_copy() {
        let tables = built(&[1, 5]);
        assert_eq!(tables.on(two_sockets(5)), "tables on 1");
        assert_eq!(tables.on(two_sockets(1)), "tables on 0");
        assert_eq!(tables.first(), "tables on 0");
        // With --no-numa every lcore is on socket 0: one copy, as in C.
        let one = PerSocket::build(&[1, 5], |_| 0, Ok::<_, ()>).unwrap();
        assert_eq!(one.iter().copied().collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn a_failed_copy_fails_the_whole() {
        let failed = PerSocket::build(&[1, 5], two_sockets, |s| if s == 1 { Err(s) } else { Ok(s) });
        assert_eq!(failed.unwrap_err(), 1);
    }
}
