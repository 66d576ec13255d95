//! Bytes between MPI ranks (rsmpi): broadcast, scatter, gather and all-gather of byte buffers
//! of any length per rank (their lengths travel first, so every rank knows them), halo rows
//! point to point, and the agreement on failures that keeps every rank in step: a rank that
//! fails still takes part in the next collective, with its error instead of its bytes, so no
//! rank waits for one that has stopped. Every collective first waits, polling and sleeping,
//! until every rank has come to it ([`Comm::settle`]): MPI's blocking calls spin, and a rank
//! spinning while another compiles or computes takes a core from it (PoCL ranks share them).

use lift_compile::Error;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

/// The tag of [`Comm::polite_broadcast`]'s messages.
const TAG_POLITE: i32 = 7;
/// The tag of halo rows.
const TAG_ROWS: i32 = 8;

/// MPI_COMM_WORLD with this process's rank, its rank among the ranks of its host, and every
/// rank's device (learnt once every rank has chosen its own).
pub(crate) struct Comm {
    world: SimpleCommunicator,
    pub(crate) rank: usize,
    pub(crate) size: usize,
    pub(crate) local_rank: usize,
    pub(crate) devices: Vec<String>,
}

impl Comm {
    pub(crate) fn new(world: SimpleCommunicator) -> Comm {
        let local = world.split_shared(world.rank());
        Comm {
            rank: world.rank() as usize,
            size: world.size() as usize,
            local_rank: local.rank() as usize,
            world,
            devices: vec![],
        }
    }

    pub(crate) fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// Every rank's buffer, on every rank (MPI_Allgather of the lengths, then MPI_Allgatherv).
    pub(crate) fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        self.settle();
        self.all_gather_now(mine)
    }

    /// [`Comm::all_gather`] where every rank is known to be here already.
    fn all_gather_now(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        let mut lens = vec![0u64; self.size];
        self.world.all_gather_into(&(mine.len() as u64), &mut lens[..]);
        let (counts, displs) = layout(&lens)?;
        let mut all = vec![0u8; lens.iter().sum::<u64>() as usize];
        // (nothing to move: MPI would see two empty buffers at one address and refuse them)
        if !all.is_empty() {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        Ok(split(all, &lens))
    }

    /// Every rank's buffer, on rank 0 (`None` elsewhere): MPI_Gatherv after an all-gather of
    /// the lengths, so that a part too long for MPI fails on every rank alike.
    pub(crate) fn gather(&self, mine: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Error> {
        self.settle();
        let mut lens = vec![0u64; self.size];
        self.world.all_gather_into(&(mine.len() as u64), &mut lens[..]);
        let (counts, displs) = layout(&lens)?;
        let root = self.world.process_at_rank(0);
        if lens.iter().all(|l| *l == 0) {
            return Ok(self.is_root().then(|| vec![vec![]; self.size]));
        }
        if !self.is_root() {
            root.gather_varcount_into(mine);
            return Ok(None);
        }
        let mut all = vec![0u8; lens.iter().sum::<u64>() as usize];
        {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut part);
        }
        Ok(Some(split(all, &lens)))
    }

    /// Every rank's `mine` combined by `op` (MPI_Reduce): on rank 0 (`None` elsewhere), or on
    /// every rank with `everywhere` (MPI_Allreduce).
    pub(crate) fn reduce<T: Equivalence + Default>(&self, mine: T, op: SystemOperation, everywhere: bool) -> Option<T> {
        self.settle();
        let mut out = T::default();
        if everywhere {
            self.world.all_reduce_into(&mine, &mut out, op);
            return Some(out);
        }
        let root = self.world.process_at_rank(0);
        if self.is_root() {
            root.reduce_into_root(&mine, &mut out, op);
            Some(out)
        } else {
            root.reduce_into(&mine, op);
            None
        }
    }

    /// Rank 0's `bytes` on every rank (MPI_Bcast of the length, then of the bytes).
    pub(crate) fn broadcast(&self, bytes: Option<Vec<u8>>) -> Result<Vec<u8>, Error> {
        self.settle();
        let root = self.world.process_at_rank(0);
        let mut len = bytes.as_ref().map_or(0, |b| b.len() as u64);
        root.broadcast_into(&mut len);
        let mut buf = bytes.unwrap_or_else(|| vec![0u8; len as usize]);
        // (MPI counts are 32-bit: a longer buffer goes in pieces)
        for chunk in buf.chunks_mut(Count::MAX as usize) {
            root.broadcast_into(chunk);
        }
        Ok(buf)
    }

    /// Rank 0's `parts[r]` on rank `r` (MPI_Scatterv after a broadcast of the lengths).
    pub(crate) fn scatter(&self, parts: Option<Vec<Vec<u8>>>) -> Result<Vec<u8>, Error> {
        self.settle();
        let root = self.world.process_at_rank(0);
        let mut lens: Vec<u64> = match &parts {
            Some(ps) => ps.iter().map(|p| p.len() as u64).collect(),
            None => vec![0; self.size],
        };
        root.broadcast_into(&mut lens[..]);
        let (counts, displs) = layout(&lens)?;
        let mut mine = vec![0u8; lens[self.rank] as usize];
        if lens.iter().all(|l| *l == 0) {
            return Ok(mine);
        }
        match parts {
            Some(ps) => {
                let all = ps.concat();
                let part = Partition::new(&all[..], &counts[..], &displs[..]);
                root.scatter_varcount_into_root(&part, &mut mine[..]);
            }
            None => root.scatter_varcount_into(&mut mine[..]),
        }
        Ok(mine)
    }

    /// [`Comm::broadcast`] for a message rank 0 may take long to make (reading the data, or
    /// running alone for `lift bench`'s one-process time): the others poll for it and sleep
    /// in between, where a blocking MPI call would spin and take a core from rank 0's work
    /// (PoCL ranks share the host's cores).
    pub(crate) fn polite_broadcast(&self, bytes: Option<Vec<u8>>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        if let Some(b) = bytes {
            for r in 1..self.size {
                self.world.process_at_rank(r as i32).send_with_tag(&b[..], TAG_POLITE);
            }
            return b;
        }
        while root.immediate_probe_with_tag(TAG_POLITE).is_none() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        root.receive_vec_with_tag::<u8>(TAG_POLITE).0
    }

    /// Point to point: sends `sends` (rank, bytes) and receives one message from each rank of
    /// `from`, returned in that order. Sends are posted first, so that neighbours sending to
    /// each other do not wait on each other.
    pub(crate) fn exchange(&self, sends: &[(usize, Vec<u8>)], from: &[usize]) -> Result<Vec<Vec<u8>>, Error> {
        if sends.iter().any(|(_, b)| b.len() > Count::MAX as usize) {
            return Err(Error::plain(
                "halo rows of more than 2 GiB between two ranks are not supported yet",
            ));
        }
        let received = mpi::request::multiple_scope(sends.len(), |scope, coll| {
            for (to, bytes) in sends {
                let req = self
                    .world
                    .process_at_rank(*to as i32)
                    .immediate_send_with_tag(scope, &bytes[..], TAG_ROWS);
                coll.add(req);
            }
            let got: Vec<Vec<u8>> = from
                .iter()
                .map(|r| {
                    self.world
                        .process_at_rank(*r as i32)
                        .receive_vec_with_tag::<u8>(TAG_ROWS)
                        .0
                })
                .collect();
            let mut done = vec![];
            coll.wait_all(&mut done);
            got
        });
        Ok(received)
    }

    /// Ends every rank's process (MPI_Abort): after a bug, where this rank cannot take part in
    /// the collectives the others wait in.
    pub(crate) fn abort(&self) -> ! {
        self.world.abort(1)
    }

    /// Waits until every rank has come here, polling and sleeping (MPI_Ibarrier): where ranks
    /// arrive at different times (after their own work), a blocking collective would spin in
    /// the early ones and take the cores the late ones need (PoCL ranks share the host).
    /// The sleeps grow from 20 µs to 1 ms: a short wait (a loop's step) stays short, and a
    /// long one (another rank's compilation or kernels) wakes this rank a few hundred times
    /// rather than ten thousand times a second, each wake a system call and a core taken
    /// from the ranks that work.
    pub(crate) fn settle(&self) {
        let mut req = self.world.immediate_barrier();
        let mut nap = std::time::Duration::from_micros(20);
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => {
                    req = r;
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(std::time::Duration::from_millis(1));
                }
            }
        }
    }

    /// Every rank's outcome of a phase, agreed on every rank: `Ok` where every rank succeeded,
    /// else one error on rank 0's terms naming the first failing rank and its device (the
    /// others' as notes), the same on every rank.
    pub(crate) fn agree<T>(&self, mine: Result<T, Error>) -> Result<T, Error> {
        let status = mine.as_ref().map(|_| vec![]).map_err(|e| Error::plain(failure_text(e)));
        self.agree_gather(status)?;
        mine
    }

    /// [`Comm::agree`] and [`Comm::all_gather`] in one collective: every rank's bytes on
    /// every rank where every rank succeeded, else the agreed error.
    pub(crate) fn agree_gather(&self, mine: Result<Vec<u8>, Error>) -> Result<Vec<Vec<u8>>, Error> {
        self.settle();
        let status = match &mine {
            Ok(b) => [&[0u8][..], b].concat(),
            Err(e) => [&[1u8][..], failure_text(e).as_bytes()].concat(),
        };
        let all = self.all_gather_now(&status)?;
        let failures: Vec<(usize, String)> = all
            .iter()
            .enumerate()
            .filter(|(_, s)| s.first() == Some(&1))
            .map(|(r, s)| (r, String::from_utf8_lossy(&s[1..]).into_owned()))
            .collect();
        if failures.is_empty() {
            return Ok(all.into_iter().map(|mut s| s.split_off(1)).collect());
        }
        Err(self.failed(failures))
    }

    /// One error for the failures of these ranks (rank, message), the first the message.
    pub(crate) fn failed(&self, failures: Vec<(usize, String)>) -> Error {
        let name = |r: usize| match self.devices.get(r) {
            Some(d) => format!("rank {r} (device {d})"),
            None => format!("rank {r}"),
        };
        let mut notes: Vec<String> = failures[1..]
            .iter()
            .map(|(r, m)| format!("{} failed too: {m}", name(*r)))
            .collect();
        notes.push("no result: every rank must succeed; every rank has stopped".into());
        let (r, m) = &failures[0];
        Error::Plain {
            message: format!("{} failed: {m}", name(*r)),
            notes,
        }
    }
}

/// An error as one line of text, its notes after it (a driver's build log stays with it).
pub(crate) fn failure_text(e: &Error) -> String {
    match e {
        Error::Plain { message, notes } if !notes.is_empty() => format!("{message} ({})", notes.join("; ")),
        other => other.message(),
    }
}

/// MPI's counts and displacements of buffers of these lengths (32-bit).
fn layout(lens: &[u64]) -> Result<(Vec<Count>, Vec<Count>), Error> {
    let total: u64 = lens.iter().sum();
    if total > Count::MAX as u64 {
        return Err(Error::plain(format!(
            "a transfer of {total} bytes between ranks: more than 2 GiB in one collective is not supported yet"
        )));
    }
    let counts: Vec<Count> = lens.iter().map(|l| *l as Count).collect();
    let displs: Vec<Count> = counts
        .iter()
        .scan(0, |acc: &mut Count, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect();
    Ok((counts, displs))
}

fn split(all: Vec<u8>, lens: &[u64]) -> Vec<Vec<u8>> {
    let mut at = 0usize;
    lens.iter()
        .map(|&l| {
            let part = all[at..at + l as usize].to_vec();
            at += l as usize;
            part
        })
        .collect()
}
