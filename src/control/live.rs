//! Tables that change while l3fwd-rs forwards. The lcores read the
//! mode's [`Lookup`](crate::dataplane::lookup::Lookup) through a [`dpdk::Live`] value under RCU QSBR; the
//! control thread, the one writer, changes them by the shadow swap:
//! it edits a copy of the rules (or re-reads the rule files), builds new
//! tables beside the live ones, swaps them in, waits for the grace period
//! and frees the old ones. This works alike for every mode, whether its
//! DPDK library has RCU support or not. Commands that arrive together are
//! one build and one swap. The changes a mode's tables take in place (its
//! [`InPlace`] writer: LPM's routes in rte_lpm and rte_lpm6, EM's flows in the
//! lock-free rte_hash) skip the swap; the writer writes them into the
//! rules before anything rebuilds from them.
//!
//! As C l3fwd, there is one set of tables per NUMA socket with a
//! forwarding lcore ([`PerSocket`]): each lcore reads its socket's, and
//! every change is made to all of them before it is answered.

use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use dpdk::{Eal, Live, Qsbr, Reader};

use crate::cli::plan::Plan;
use crate::control::protocol::{Answer, Command, Page, MORE};
use crate::dataplane::mode::{Family, InPlace, Listing, LiveBuild, Mode, RuleChange, TableCount};
use crate::dataplane::sockets::PerSocket;

/// What the control thread holds: the live tables of whatever mode runs,
/// behind one object-safe face.
pub trait Tables: Send {
    /// Runs commands that arrived together, in order; the rule changes
    /// among them are built and swapped in once (before a `route get`
    /// that follows them, and at the end). A command that fails changes
    /// nothing. A `reload` takes the rules [`Tables::rules_read`] read, or
    /// reads the files itself if none were.
    fn execute(&mut self, commands: &[Command]) -> Vec<Answer>;
    /// Whether the rule files have been read for the next `reload`:
    /// starts reading them on a thread of its own if no read is under
    /// way (a FIFO waits for its writer; the control thread must not).
    fn rules_read(&mut self) -> bool;
    /// Gives up the read under way: what it reads is not used.
    fn abandon_read(&mut self);
    /// `trace`: what the lookup keys `frame` on, and the rule that
    /// decides it (see [`Mode::explain`]).
    fn explain(&mut self, frame: &[u8]) -> String;
    /// What the live tables hold, by kind and family.
    fn counts(&mut self) -> Vec<TableCount>;
}

/// How long a `reload` waits for its rule files to be read (a FIFO with
/// no writer would wait forever) before it fails.
pub const RELOAD_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A reader id for the control thread, above every lcore's (`route get`
/// reads the live tables as an lcore does).
const CONTROL_READER: u32 = dpdk::MAX_LCORES;

/// The live tables of mode `M` and what rebuilding them takes.
pub struct LiveTables<M: Mode> {
    eal: Eal,
    plan: Plan,
    options: M::Options,
    /// The rules the live tables were built from.
    rules: M::Rules,
    /// The tables of each socket.
    copies: PerSocket<SocketTables<M>>,
    /// The rule files' read for the next reload: under way, or done.
    read: Option<RulesRead<M::Rules>>,
}

/// One socket's live tables.
struct SocketTables<M: Mode> {
    live: Arc<Live<M::Lookup>>,
    /// The writer of the live tables' in-place changes, if they take any.
    in_place: Option<Box<dyn InPlace<M::Rules>>>,
    /// The control thread's reader (`route get`).
    reader: Reader<M::Lookup>,
}

/// A read of the rule files on a thread of its own.
enum RulesRead<R> {
    Reading(std::sync::mpsc::Receiver<Result<R, String>>),
    Done(Result<R, String>),
}

impl<M: Mode> LiveTables<M> {
    /// Builds the tables of `rules` for each socket one of `lcores` (the
    /// forwarding lcores) is on, as `socket` gives it, and makes them
    /// live; each lcore registers by its lcore id with the live tables of
    /// its socket ([`LiveTables::live`]).
    pub fn new(
        eal: &Eal,
        plan: &Plan,
        options: &M::Options,
        rules: M::Rules,
        lcores: &[u32],
        socket: impl Fn(u32) -> u32,
    ) -> Result<Self, Box<dyn Error>> {
        let copies = PerSocket::build(lcores, socket, |socket| -> Result<SocketTables<M>, Box<dyn Error>> {
            let qsbr = Arc::new(Qsbr::new(CONTROL_READER + 1)?);
            let (lookup, in_place) = M::build_live(eal, socket, plan, options, rules.clone(), &qsbr)?;
            let live = Arc::new(Live::new(qsbr, lookup));
            let reader = live.register(CONTROL_READER)?;
            Ok(SocketTables { live, in_place, reader })
        })?;
        Ok(LiveTables {
            eal: eal.clone(),
            plan: plan.clone(),
            options: options.clone(),
            rules,
            copies,
            read: None,
        })
    }

    /// The live tables of each socket, which the lcores read.
    pub fn live(&self) -> PerSocket<Arc<Live<M::Lookup>>> {
        self.copies.map(|c| Arc::clone(&c.live))
    }

    /// Builds tables from `rules` beside the live ones and swaps them in;
    /// the old ones are freed after the grace period. On an error the live
    /// tables and rules stay as they were.
    /// With `family`, the rules differ from the live tables' in that
    /// family's entries only, and the mode may rebuild its tables alone.
    fn swap_in(&mut self, rules: M::Rules, family: Option<Family>) -> Result<(), Box<dyn Error>> {
        let started = Instant::now();
        // Every socket's new tables are built before any is swapped in: a
        // failure leaves them all as they were.
        let built_tables = self.rebuild(&rules, family)?;
        let built = started.elapsed();
        let retired: Vec<_> = self
            .copies
            .iter_mut()
            .zip(built_tables)
            .map(|(copy, built)| match built {
                Rebuilt::Whole((lookup, in_place)) => {
                    copy.in_place = in_place;
                    copy.live.swap(lookup)
                }
                Rebuilt::OneFamily(lookup) => copy.live.swap(lookup),
            })
            .collect();
        let old: Vec<_> = retired.into_iter().map(|r| r.synchronize()).collect();
        let grace = started.elapsed();
        drop(old);
        self.rules = rules;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        log::info!(
            "new tables built in {:.1} ms and swapped in; grace period {:.3} ms; old ones freed in {:.1} ms",
            ms(built),
            ms(grace - built),
            ms(started.elapsed() - grace)
        );
        Ok(())
    }

    /// Tables of `rules` for each socket, beside the live ones: of
    /// `family` alone where the mode can (see [`Mode::rebuild_family`]).
    fn rebuild(&mut self, rules: &M::Rules, family: Option<Family>) -> Result<Vec<Rebuilt<M>>, Box<dyn Error>> {
        let LiveTables {
            eal,
            plan,
            options,
            copies,
            ..
        } = self;
        let sockets: Vec<u32> = copies.sockets().collect();
        let each = sockets.into_iter().zip(copies.iter_mut());
        each.map(|(socket, copy)| {
            if let Some(family) = family {
                let online = copy.reader.online();
                let live = online.read();
                if let Some(built) = M::rebuild_family(eal, socket, plan, options, rules, &live, family) {
                    return built.map(Rebuilt::OneFamily);
                }
            }
            let built = M::build_live(eal, socket, plan, options, rules.clone(), copy.live.qsbr());
            built.map(Rebuilt::Whole)
        })
        .collect()
    }

    /// The in-place writer, if the tables take changes in place: the
    /// first socket's (the others take the same changes).
    fn in_place(&self) -> Option<&dyn InPlace<M::Rules>> {
        self.copies.first().in_place.as_deref()
    }

    /// Writes the changes made in place since the last flush into the
    /// rules. Every socket's writer made the same ones, so each flush
    /// writes the same: a change written twice is written once.
    fn flush_in_place(&mut self) {
        for copy in self.copies.iter_mut() {
            if let Some(writer) = copy.in_place.as_mut() {
                writer.flush(&mut self.rules);
            }
        }
    }
}

/// An answer of several lines: each of `lines` marked as one before the
/// last, then `last`.
fn lines_then(lines: &[String], last: &str) -> String {
    lines.iter().map(|line| format!("{MORE}{line}\n")).collect::<String>() + last
}

/// What a swap puts in for one socket.
enum Rebuilt<M: Mode> {
    /// Tables of every family, and their in-place writer.
    Whole(LiveBuild<M>),
    /// One family's tables beside the live ones of the other family,
    /// whose in-place writer stays.
    OneFamily(M::Lookup),
}

const UNCHANGED: &str = "the tables in use are unchanged";

/// Edits waiting for their build: the rules they make, and the edits in
/// order (to replay them one by one if the build fails).
struct Pending<R> {
    rules: R,
    edits: Vec<Edit<R>>,
    /// The changes not in `rules` yet, in order, by command (None: made
    /// in place): applied together, in one pass where the mode can
    /// ([`LiveTables::apply_changes`]).
    unapplied: Vec<(Option<usize>, RuleChange)>,
}

/// One edit of a pending batch.
enum Edit<R> {
    /// Command `.0`'s change, answered by the build.
    Change(usize, RuleChange),
    /// Command `.0`'s reload: the rule files' rules.
    Reload(usize, R),
    /// A change already made in place: in the live tables whatever the
    /// build gives, so in every rebuild.
    MadeInPlace(RuleChange),
}

impl<R> Pending<R> {
    /// The commands whose answers wait on the build.
    fn commands(&self) -> Vec<usize> {
        let judged = self.edits.iter().filter_map(|e| match e {
            Edit::Change(i, _) | Edit::Reload(i, _) => Some(*i),
            Edit::MadeInPlace(_) => None,
        });
        judged.collect()
    }

    /// The one family the batch's rebuild must change: that of every
    /// change it holds, if they are of one. Changes made in place are in
    /// the live tables, which a rebuild of the other family shares.
    fn family(&self) -> Option<Family> {
        let mut family = None;
        for edit in &self.edits {
            let edited = match edit {
                Edit::MadeInPlace(_) => continue,
                Edit::Reload(..) => return None,
                Edit::Change(_, change) => change.family()?,
            };
            if family.is_some_and(|f| f != edited) {
                return None;
            }
            family = Some(edited);
        }
        family
    }

    fn reloads(&self) -> bool {
        self.edits.iter().any(|e| matches!(e, Edit::Reload(..)))
    }
}

impl<M: Mode> Tables for LiveTables<M> {
    fn execute(&mut self, commands: &[Command]) -> Vec<Answer> {
        let mut answers: Vec<Answer> = vec![Ok(String::new()); commands.len()];
        let mut pending: Option<Pending<M::Rules>> = None;
        for (i, command) in commands.iter().enumerate() {
            let edited = match command {
                Command::RouteGet(dst) => {
                    self.commit(pending.take(), &mut answers);
                    let online = self.copies.first_mut().reader.online();
                    answers[i] =
                        M::route_get(&online.read(), *dst).map(|port| port.map_or("miss".into(), |p| p.to_string()));
                    continue;
                }
                Command::RouteStats => {
                    // Stats of what the commands before it made.
                    self.commit(pending.take(), &mut answers);
                    answers[i] = self.route_stats();
                    continue;
                }
                Command::Change(change) if self.in_place().is_some_and(|w| w.takes(change)) => {
                    // A pending reload goes in first: the change is made on
                    // top of the files. Other pending edits are of tables
                    // the writer does not change (LPM's IPv6 beside its
                    // IPv4): they wait, the change goes into their rules
                    // too, and one build still serves the whole batch.
                    if pending.as_ref().is_some_and(Pending::reloads) {
                        self.commit(pending.take(), &mut answers);
                    }
                    answers[i] = self.change_in_place(change);
                    if let (Ok(_), Some(batch)) = (&answers[i], pending.as_mut()) {
                        batch.unapplied.push((None, change.clone()));
                        batch.edits.push(Edit::MadeInPlace(change.clone()));
                    }
                    continue;
                }
                Command::Change(change) => {
                    self.flush_in_place();
                    // One copy of the rules for the batch; its changes go
                    // in together (apply_changes), and one that fails
                    // leaves them as they were.
                    let batch = pending.get_or_insert_with(|| Pending {
                        rules: self.rules.clone(),
                        edits: Vec::new(),
                        unapplied: Vec::new(),
                    });
                    batch.unapplied.push((Some(i), change.clone()));
                    batch.edits.push(Edit::Change(i, change.clone()));
                    continue;
                }
                Command::Reload => self.take_read().map_err(|e| format!("{e}; {UNCHANGED}")),
                Command::List(what, page) => {
                    // A list shows what the commands before it made.
                    self.commit(pending.take(), &mut answers);
                    answers[i] = self.list(what, *page);
                    continue;
                }
                Command::Trace(_) => {
                    answers[i] = Err("trace is the socket's to serve, not the tables'".into());
                    continue;
                }
            };
            match edited {
                Ok(rules) => {
                    // The changes before it are answered as they would be
                    // alone, though the reload's rules replace theirs.
                    let mut edits = match pending.take() {
                        Some(mut batch) => {
                            self.apply_changes(&mut batch, &mut answers);
                            batch.edits
                        }
                        None => Vec::new(),
                    };
                    edits.push(Edit::Reload(i, rules.clone()));
                    pending = Some(Pending {
                        rules,
                        edits,
                        unapplied: Vec::new(),
                    });
                }
                Err(e) => answers[i] = Err(e),
            }
        }
        self.commit(pending, &mut answers);
        answers
    }

    fn rules_read(&mut self) -> bool {
        if self.read.is_none() {
            let (done, reading) = std::sync::mpsc::channel();
            let options = self.options.clone();
            let spawned = std::thread::Builder::new()
                .name("l3fwd-reload".into())
                .spawn(move || drop(done.send(M::load(&options).map_err(|e| e.to_string()))));
            self.read = Some(match spawned {
                Ok(_) => RulesRead::Reading(reading),
                Err(e) => RulesRead::Done(Err(format!("cannot start reading the rule files: {e}"))),
            });
        }
        if let Some(RulesRead::Reading(reading)) = &self.read {
            match reading.try_recv() {
                Ok(read) => self.read = Some(RulesRead::Done(read)),
                Err(std::sync::mpsc::TryRecvError::Empty) => return false,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    self.read = Some(RulesRead::Done(Err("the rule files' reader stopped".into())))
                }
            }
        }
        true
    }

    fn abandon_read(&mut self) {
        // The reader's send then finds no receiver; its thread ends when
        // its read does.
        self.read = None;
    }

    fn explain(&mut self, frame: &[u8]) -> String {
        self.flush_in_place();
        M::explain(&self.rules, &self.options, frame)
    }

    fn counts(&mut self) -> Vec<TableCount> {
        self.flush_in_place();
        let held = self.in_place().and_then(|w| w.counts());
        held.unwrap_or_else(|| M::counts(&self.rules, &self.plan, &self.options))
    }
}

impl<M: Mode> LiveTables<M> {
    /// The rules [`Tables::rules_read`] read, or the files read now.
    fn take_read(&mut self) -> Result<M::Rules, String> {
        match self.read.take() {
            Some(RulesRead::Done(read)) => read,
            // Under way (or none): read here, as a SIGHUP before the
            // socket ever asked does.
            _ => M::load(&self.options).map_err(|e| e.to_string()),
        }
    }

    /// Makes `change` in every socket's live tables; the writers keep it
    /// for the rules until the next flush. The copies are alike, so a
    /// change one refuses the first refuses, and nothing has changed.
    fn change_in_place(&mut self, change: &RuleChange) -> Answer {
        for (n, copy) in self.copies.iter_mut().enumerate() {
            let writer = copy.in_place.as_mut().ok_or("no table here changes in place")?;
            if let Err(e) = writer.apply(change) {
                return Err(match n {
                    0 => format!("{e}; {UNCHANGED}"),
                    _ => format!("{e} on the tables of a socket after the first took it; they differ until a reload"),
                });
            }
        }
        Ok("ok".into())
    }

    /// Writes the changes of `batch` not in its rules yet into them, each
    /// as if it came alone (one pass for them all where the mode can:
    /// [`Mode::change_rules_in_turn`]); a refused change is answered and
    /// leaves the batch.
    fn apply_changes(&self, batch: &mut Pending<M::Rules>, answers: &mut [Answer]) {
        let unapplied = std::mem::take(&mut batch.unapplied);
        let changes: Vec<&RuleChange> = unapplied.iter().map(|(_, change)| change).collect();
        let results = M::change_rules_in_turn(&mut batch.rules, &self.plan, &self.options, &changes);
        let mut refused = std::collections::HashSet::new();
        for ((command, _), result) in unapplied.iter().zip(results) {
            match (command, result) {
                (_, Ok(())) => {}
                (Some(i), Err(e)) => {
                    answers[*i] = Err(format!("{e}; {UNCHANGED}"));
                    refused.insert(*i);
                }
                (None, Err(e)) => log::warn!("a change made in place does not apply to the rules being built: {e}"),
            }
        }
        if !refused.is_empty() {
            batch
                .edits
                .retain(|edit| !matches!(edit, Edit::Change(i, _) if refused.contains(i)));
        }
    }

    /// Builds and swaps in what `pending` holds and answers its commands
    /// `ok`. If the build fails, each command is answered as if it had
    /// come alone, in order: see [`LiveTables::replay`].
    fn commit(&mut self, pending: Option<Pending<M::Rules>>, answers: &mut [Answer]) {
        let Some(mut pending) = pending else {
            return;
        };
        self.apply_changes(&mut pending, answers);
        let commands = pending.commands();
        if commands.is_empty() {
            return; // only changes that failed, or made in place
        }
        let family = pending.family();
        match self.swap_in(pending.rules, family) {
            Ok(()) => commands.iter().for_each(|&i| answers[i] = Ok("ok".into())),
            Err(e) if commands.len() == 1 => answers[commands[0]] = Err(format!("{e}; {UNCHANGED}")),
            Err(_) => self.replay(pending.edits, answers),
        }
    }

    /// A batch whose build failed, one edit at a time: each command's
    /// edit on top of those before it that fit gets a build of its own
    /// (beside the live tables, dropped at once), which says whether it
    /// fits; what fits is then built once more and swapped in. So
    /// commands that arrive together are answered as if each came alone,
    /// whatever they were sent with, at the price of a build per command
    /// when the batch's own build failed.
    fn replay(&mut self, edits: Vec<Edit<M::Rules>>, answers: &mut [Answer]) {
        let mut rules = self.rules.clone();
        let mut fitted = Vec::new();
        for edit in edits {
            let (i, next) = match edit {
                Edit::MadeInPlace(change) => {
                    self.apply_made(&mut rules, &change);
                    continue;
                }
                Edit::Reload(i, loaded) => (i, loaded),
                Edit::Change(i, change) => {
                    let mut next = rules.clone();
                    match M::change_rules(&mut next, &self.plan, &self.options, &change) {
                        Ok(()) => (i, next),
                        Err(e) => {
                            answers[i] = Err(format!("{e}; {UNCHANGED}"));
                            continue;
                        }
                    }
                }
            };
            match self.rebuild(&next, None) {
                Ok(_) => {
                    fitted.push(i);
                    rules = next;
                }
                Err(e) => answers[i] = Err(format!("{e}; {UNCHANGED}")),
            }
        }
        if fitted.is_empty() {
            return;
        }
        let result = self.swap_in(rules, None).map_err(|e| format!("{e}; {UNCHANGED}"));
        for i in fitted {
            answers[i] = result.clone().map(|()| "ok".into());
        }
    }

    /// `route stats`: the routes by family and depth, then the tbl8
    /// groups of the tables that change in place, if any (their writer
    /// first reclaims what the lcores are done with).
    fn route_stats(&mut self) -> Answer {
        self.flush_in_place();
        let mut lines = M::route_depths(&self.rules, &self.plan)?;
        let writer = self.copies.first_mut().in_place.as_mut();
        lines.extend(writer.and_then(|w| w.stats()));
        let last = lines.pop().unwrap_or_default();
        Ok(lines_then(&lines, &last))
    }

    /// A `list` command's answer: a `page` of the entries, each on a line
    /// of its own before the last, which says how many there are.
    fn list(&mut self, what: &Listing, page: Page) -> Answer {
        self.flush_in_place();
        let live = match what {
            Listing::Flows => self.in_place().and_then(|w| w.list()),
            _ => None,
        };
        let entries = match live {
            Some(entries) => entries,
            None => M::list(&self.rules, &self.plan, &self.options, what)?,
        };
        let start = page.skip.min(entries.len());
        let shown = &entries[start..start.saturating_add(page.limit).min(entries.len())];
        let after = match page.skip {
            0 => String::new(),
            skip => format!(" after the first {skip}"),
        };
        Ok(lines_then(
            shown,
            &format!("{} of {} shown{after}", shown.len(), entries.len()),
        ))
    }

    /// Writes a change already made in place into `rules`.
    fn apply_made(&self, rules: &mut M::Rules, change: &RuleChange) {
        if let Err(e) = M::change_rules(rules, &self.plan, &self.options, change) {
            log::warn!("a change made in place does not apply to the rules being built: {e}");
        }
    }
}
