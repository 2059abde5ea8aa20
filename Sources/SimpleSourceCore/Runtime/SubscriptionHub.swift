// The storage behind subscriptions: a registry of per-subscriber mailboxes, each with its own lock.

internal import Dispatch

/// Who waits for a subscriber's next delivery: a suspended task, or a follower parked with its sink and no
/// task (``Subscription/follow(parkingWith:lane:parked:_:ended:)``), whose callback starts one.
@usableFromInline
enum SubscriberWaiter<Section: SectionType>: Sendable {
  case task(UnsafeContinuation<SubscriptionDelivery<Section>, Never>)
  case callback(@Sendable (SubscriptionDelivery<Section>) -> Void)

  /// Hands `delivery` over: resumes the task, or calls the callback. Called outside every lock.
  @inlinable
  func resume(returning delivery: SubscriptionDelivery<Section>) {
    switch self {
    case .task(let continuation): continuation.resume(returning: delivery)
    case .callback(let wake): wake(delivery)
    }
  }
}

/// One subscriber's storage: its state machine behind its own lock, so that consumers never contend with
/// each other, and a publish touches each subscriber once.
@usableFromInline
final class SubscriberMailbox<Section: SectionType>: Sendable {
  @usableFromInline typealias Machine = SubscriberStateMachine<Section, Waiter>
  @usableFromInline typealias Waiter = SubscriberWaiter<Section>
  @usableFromInline let state: Locked<Machine>
  @usableFromInline let differ: Differ<Section>
  /// The counter of the hub's versions, which its composed batches carry.
  @usableFromInline let counter: VersionCounter
  /// The newest version the consumer holds (G13): what it took once it asks for more, and versions that
  /// cancelled out once it took what precedes them; finished when the subscription ends.
  @usableFromInline let progress: HeldVersion
  /// The hub's count of catch-ups that fell back to a full diff, shared by its subscribers.
  @usableFromInline let fullDiffs: Locked<Int>

  @inlinable
  init(
    _ machine: Machine, differ: Differ<Section>, counter: VersionCounter, fullDiffs: Locked<Int> = Locked(0)
  ) {
    progress = HeldVersion(machine.version)
    state = Locked(machine)
    self.differ = differ
    self.counter = counter
    self.fullDiffs = fullDiffs
  }

  /// The consumer asks for its next batch: it holds everything it took, up to the newest version known
  /// to hold the same content. Called by ``next()`` before it may park, and before a pacing gate's wait.
  ///
  /// With `announcing`, the consumer is told of versions held with no batch from now on
  /// (``SubscriberStateMachine/announcesHeld``); with a `lane`, it is served in that lane from now on.
  @inlinable
  func asked(announcing: Bool = false, lane: SubscriptionLane? = nil) {
    let held = state.withLock { state in
      if let lane { state.lane = lane }
      return state.asks(announcing: announcing)
    }
    if let held { progress.hold(through: held) }
  }

  /// See ``SubscriberStateMachine/reachedWithoutBatch(to:)``.
  @inlinable
  func reachedWithoutBatch(to version: Int) {
    switch state.withLock({ $0.reachedWithoutBatch(to: version) }) {
    case .report(let held): progress.hold(through: held)
    case .resume(let waiter, let delivery): waiter.resume(returning: delivery)
    case nil: break
    }
  }

  /// A consumer woken in a lane after the first: resumed once the publish has offered the batch to every
  /// subscriber, in the order of lanes.
  @usableFromInline
  typealias Deferred = (
    mailbox: SubscriberMailbox, waiter: Waiter, delivery: Machine.Delivery, lane: SubscriptionLane
  )

  /// Offers a published batch: handed to the consumer if it waits, or, when it is parked with a sink and
  /// the batch is its next, left for one of the hub's writers. A consumer in the first lane is resumed at
  /// once; one in a later lane is added to `later`, for the caller to resume in the order of lanes. Returns
  /// the subscriber's lane when its sink is due a write (the caller hands it to the writers, ``write()``, in
  /// the order of lanes), `nil` otherwise. No sink is called here.
  ///
  /// Inlined into the hub's loop over its subscribers, as are the state machine's steps it takes: that
  /// loop runs unspecialized (a source is generic over its section), and inlined, it looks up the types'
  /// metadata once per subscriber rather than once per call.
  /// - Complexity: O(1); O(*k*) for a batch of *k* ids the subscriber missed.
  @inlinable @inline(__always)
  func publish(
    _ batch: UpdateBatch<Section>, refreshing: Set<Section.Item.ID>, deferring later: inout [Deferred]
  )
    -> SubscriptionLane?
  {
    var due = false
    var lane = SubscriptionLane.first
    let handed = state.withLock { state -> (Waiter, Machine.Delivery)? in
      lane = state.lane
      if state.publishToSink(batch, refreshing: refreshing) {
        due = true
        return nil
      }
      let handed = state.publish(batch, refreshing: refreshing)
      due = state.queueWrite()
      return handed
    }
    if let (waiter, delivery) = handed {
      if lane == .first {
        waiter.resume(returning: delivery)
      } else {
        later.append((self, waiter, delivery, lane))
      }
    }
    return due ? lane : nil
  }

  /// Makes the writes due to the parked consumer's sink, each outside the lock: the batch is taken under
  /// the lock (``SubscriberStateMachine/startWrite()``), written, and the outcome reported under it again
  /// (``SubscriberStateMachine/wrote(took:)``); then the held version is reported and a woken consumer
  /// resumed. Called by the hub's writers only.
  /// - Complexity: O(1) per write besides the sink.
  @inlinable @inline(__always)
  func write() {
    var sink: SubscriptionSink<Section>?
    var next = state.withLock { $0.startWrite(sink: &sink) }
    while let batch = next, let write = sink {
      let took = write(batch)
      let outcome = state.withLock { $0.wrote(took: took) }
      if let held = outcome.held { progress.hold(through: held) }
      if let waiter = outcome.waiter, let delivery = outcome.delivery { waiter.resume(returning: delivery) }
      (next, sink) = (outcome.next, outcome.sink)
    }
  }

  /// See ``SubscriberStateMachine/cancelledOut(to:snapshot:since:touched:)``.
  @inlinable
  func cancelledOut(to version: Int, snapshot: Snapshot<Section>, since: Int, touched: Set<Section.Item.ID>?)
  {
    if let (waiter, delivery) = state.withLock({
      $0.cancelledOut(to: version, snapshot: snapshot, since: since, touched: touched)
    }) {
      waiter.resume(returning: delivery)
    }
  }

  /// Ends the subscription. A write that is out completes, and its writer then wakes the consumer with
  /// the end; none starts after this returns.
  @inlinable
  func end() {
    state.withLock { $0.end() }?.resume(returning: .end)
    progress.finish()
  }

  /// The next non-empty batch, or `nil` when the subscription has ended.
  ///
  /// Cancellation is handled by the caller: the subscription's stream ends the mailbox when its
  /// consuming task is cancelled, which resumes this wait with `.end`. The state machine hands each
  /// waiter out of its state exactly once, so an unsafe continuation is sound here and spares an
  /// allocation per delivery.
  ///
  /// With a `sink`, the consumer parks with it: shared batches are written to the sink meanwhile (one
  /// waiting when it asks, by this task), and this returns only a batch the sink refused or one composed
  /// for the consumer, which it hands over by itself. `parkedWithSink` is called each time it parks so
  /// (the wire's sessions count their parks with it).
  @inlinable
  func next(
    sink: SubscriptionSink<Section>? = nil, parkedWithSink: (@Sendable () -> Void)? = nil
  ) async -> UpdateBatch<Section>? {
    // Not announcing, the consumer is handed batches only.
    guard case .batch(let batch)? = await nextEvent(sink: sink, parkedWithSink: parkedWithSink) else {
      return nil
    }
    return batch
  }

  /// The consumer's next event, or `nil` when the subscription has ended: a non-empty batch, or, when
  /// `announcing`, a version it holds with no batch (``SubscriberStateMachine/announcesHeld``). Otherwise
  /// as ``next(sink:parkedWithSink:)``.
  @inlinable
  func nextEvent(
    sink: SubscriptionSink<Section>? = nil, lane: SubscriptionLane = .first,
    parkedWithSink: (@Sendable () -> Void)? = nil, announcing: Bool = false
  ) async -> SubscriptionEvent<Section>? {
    while true {
      // Asking, the consumer holds what it took (G13): reported before it may park, since nothing may
      // run once it is parked (a publisher may resume it at once, on another thread).
      asked(announcing: announcing, lane: lane)
      let wait = TaskSchedule.beginWait("the next batch of a subscription")
      // Whether the delivery was waiting when the consumer asked: a batch the publisher hands over later
      // was offered to the sink first (and refused).
      var waiting = false
      let delivery = await withUnsafeContinuation { continuation in
        let delivery = state.withLock { state in
          // A quiet version that arrived since `asked()` is reported first, then the consumer asks again.
          state.newlyHeld().map { .held($0) } ?? state.next(waiter: .task(continuation), sink: sink)
        }
        if let delivery {
          waiting = true
          continuation.resume(returning: delivery)
        } else if sink != nil {
          // Parked; the callback touches nothing of the consumer's.
          parkedWithSink?()
        }
      }
      TaskSchedule.endWait(wait)
      // A publisher may resume the wait before the task has suspended (between the closure above and the
      // suspension); the runtime then goes on without suspending, ordering memory with an atomic that
      // ThreadSanitizer does not see (it hears of a resume only through a suspended task's next run), so
      // it would call the consumer's reads of the publisher's snapshots a race. Taking the lock that the
      // publisher released before resuming states the order it is owed: O(1), uncontended.
      state.withLock { _ in }
      switch await event(of: delivery, waiting: waiting, sink: sink) {
      case .event(let event): return event
      case .end: return nil
      case .again: continue
      }
    }
  }

  /// What a delivery makes of the consumer's request: an event to hand over, the end, or nothing (the
  /// consumer asks again).
  @usableFromInline
  enum Step: Sendable {
    case event(SubscriptionEvent<Section>)
    case again
    case end
  }

  /// What `delivery` gives the consumer, in its task: a held version is reported, a batch waiting when it
  /// asked (`waiting`) is written to its `sink`, a catch-up is composed (off the caller's actor).
  /// - Complexity: O(1) besides the sink and a catch-up's composition.
  @inlinable
  func event(of delivery: SubscriptionDelivery<Section>, waiting: Bool, sink: SubscriptionSink<Section>?)
    async -> Step
  {
    switch delivery {
    case .held(let version):
      progress.hold(through: version)
      return .again
    case .announce(let version):
      // Its progress holds it when the consumer asks again, having dealt with it.
      return .event(.held(version))
    case .end:
      return .end
    case .batch(let batch):
      // The shared batch was waiting when the consumer asked: parked with a sink, it would have been
      // written there, so it is, from this task (the publisher writes to a sink only while its consumer
      // is parked: never at the same time). Taken, it is held once the consumer asks again.
      if waiting, let sink, sink(batch) { return .again }
      return .event(.batch(batch))
    case .compose(let from, let fromVersion, let to, let toVersion, let refreshing, let touched):
      let changeset = await Self.compose(
        from: from, to: to, refreshing: refreshing, touched: touched, differ: differ,
        fullDiffs: fullDiffs)
      // An empty composition is not delivered (G4); the subscriber keeps its version (G1).
      if changeset.isEmpty {
        // The consumer is still asking: it holds `toVersion` already, which the next request reports
        // (or announces).
        return .again
      }
      state.withLock { $0.delivered(version: toVersion, snapshot: to) }
      return .event(.batch(differ.batch(fromVersion, toVersion, counter, changeset)))
    }
  }

  /// The consumer asks for its next delivery and, when none is waiting, parks with `sink` and no task:
  /// `wake` is called once, later, with the delivery (outside every lock, from the thread that hands it
  /// over: a publisher's or a writer's), and should start a task to handle it. Otherwise as
  /// ``nextEvent(sink:lane:parkedWithSink:announcing:)``, which this is the first half of.
  /// - Returns: The delivery waiting when it asked (the caller handles it, in its task, as one that was
  ///   `waiting`), or `nil` when it parked.
  /// - Complexity: O(1).
  @inlinable
  func park(
    sink: @escaping SubscriptionSink<Section>, lane: SubscriptionLane,
    parkedWithSink: (@Sendable () -> Void)?,
    wake: @escaping @Sendable (SubscriptionDelivery<Section>) -> Void
  ) -> SubscriptionDelivery<Section>? {
    asked(announcing: false, lane: lane)
    let delivery = state.withLock { state in
      state.newlyHeld().map { .held($0) } ?? state.next(waiter: .callback(wake), sink: sink)
    }
    if delivery == nil { parkedWithSink?() }
    return delivery
  }

  /// Diffs on the global concurrent executor, never on the caller's actor (G9): from the `touched` ids
  /// of the missed batches when they are known and both snapshots are persistent, in full otherwise (each
  /// full diff counted in `fullDiffs`).
  @inlinable
  @concurrent
  static func compose(
    from: Snapshot<Section>, to: Snapshot<Section>, refreshing: Set<Section.Item.ID>,
    touched: Set<Section.Item.ID>?, differ: Differ<Section>, fullDiffs: Locked<Int>? = nil
  ) async -> Changeset<Section> {
    // A snapshot without its persistent form would be indexed again for the ids: the full diff costs as much.
    if let touched, from.hasPersistentForm && to.hasPersistentForm,
      let changeset = differ.logged(from, to, touched, refreshing)
    {
      return changeset
    }
    fullDiffs?.withLock { $0 += 1 }
    return differ.diff(from, to, refreshing)
  }
}

/// Holds a data source's subscribers and publishes batches to them.
///
/// Publishing never waits for a consumer: it updates each subscriber's state machine and resumes the
/// consumers that already wait. A consumer that fell behind composes its own catch-up batch in its own
/// task, off the main actor (G6, G7, G9).
@usableFromInline
final class SubscriptionHub<Section: SectionType>: Sendable {
  // Guard map: `registry` (the mailboxes, the newest batch and state, the history, whether it finished) is
  // read and written only under its lock; each subscriber's machine only under its mailbox's `state` lock;
  // the writes owed to sinks (`writers`) under theirs; `fullDiffs` under its own. No lock is taken while
  // another is held: the hub copies the mailboxes out of `registry` and visits each after releasing it; a
  // mailbox resumes its waiter and reports a held version to its `progress` (a lock of its own) after
  // releasing its `state`. Nothing a subscriber supplies runs under any of them: a sink is called by a
  // writer task between two holds of its mailbox's lock. Tasks: publishers' and consumers' tasks call in, a
  // consumer composes its catch-up in its task, and a writer (two when the first is held, on Dispatch's
  // global queue) runs while sinks are owed writes.
  @usableFromInline
  struct Registry: Sendable {
    /// The registered subscribers, in no particular order: a cancelled one's place is taken by the last.
    @usableFromInline var mailboxes: [SubscriberMailbox<Section>] = []
    /// Where each registered subscriber is in `mailboxes`, so that a cancellation costs O(1), not a
    /// search of every subscriber.
    @usableFromInline var places: [ObjectIdentifier: Int] = [:]
    @usableFromInline var newest: UpdateBatch<Section>?
    @usableFromInline var newestVersion: Int
    @usableFromInline var newestSnapshot: Snapshot<Section>
    @usableFromInline var isFinished = false
    /// See ``SubscriberStateMachine/unbatchedVersion``.
    @usableFromInline var unbatchedVersion: Int
    /// The newest offered versions, for subscribers that resume (G11).
    @usableFromInline var history: RetainedHistory<Section>

    @inlinable
    init(
      version: Int, snapshot: Snapshot<Section>, history limit: HistoryLimit,
      applyEdits: @escaping @Sendable (Snapshot<Section>, [BatchEdit<Section>]) -> Snapshot<Section>?
    ) {
      newestVersion = version
      newestSnapshot = snapshot
      unbatchedVersion = version
      history = RetainedHistory(version: version, snapshot: snapshot, limit: limit, applyEdits: applyEdits)
    }

    /// Registers `mailbox` last.
    /// - Complexity: O(1) amortized.
    @inlinable
    mutating func add(_ mailbox: SubscriberMailbox<Section>) {
      places[ObjectIdentifier(mailbox)] = mailboxes.count
      mailboxes.append(mailbox)
    }

    /// Removes `mailbox` if registered: the last subscriber takes its place.
    /// - Complexity: O(1) expected (O(*s*) once after a publish that still holds the list).
    @inlinable
    mutating func remove(_ mailbox: SubscriberMailbox<Section>) {
      guard let place = places.removeValue(forKey: ObjectIdentifier(mailbox)) else { return }
      let last = mailboxes.removeLast()
      if place < mailboxes.count {
        mailboxes[place] = last
        places[ObjectIdentifier(last)] = place
      }
    }

    /// Removes every subscriber and returns them.
    /// - Complexity: O(*s*) to release the places of *s* subscribers.
    @inlinable
    mutating func removeAll() -> [SubscriberMailbox<Section>] {
      defer { (mailboxes, places) = ([], [:]) }
      return mailboxes
    }
  }

  @usableFromInline let registry: Locked<Registry>
  /// The subscribers whose sinks are owed a write, and the writers that make them.
  @usableFromInline let writers = Locked(SinkWritersStateMachine<SubscriberMailbox<Section>>())
  /// How many catch-ups of this hub's subscribers fell back to a full diff (see
  /// ``SubscriberMailbox/compose(from:to:refreshing:touched:differ:fullDiffs:)``).
  @usableFromInline let fullDiffs = Locked(0)

  @usableFromInline let differ: Differ<Section>
  /// Whether the history keeps more than the newest version (``RetainedHistory/keepsVersions``).
  @usableFromInline let keepsHistory: Bool
  /// The counter the hub's versions belong to, which its subscriptions check waits against.
  @usableFromInline let counter: VersionCounter
  /// The loops over the subscribers, specialized for `Section` where they were made (``HubLoops``).
  @usableFromInline let loops: HubLoops<Section>

  @inlinable
  init(
    version: Int, snapshot: Snapshot<Section>, differ: Differ<Section>, history: HistoryLimit,
    counter: VersionCounter, loops: HubLoops<Section> = HubLoops()
  ) {
    registry = Locked(
      Registry(version: version, snapshot: snapshot, history: history, applyEdits: differ.applyEdits))
    keepsHistory = history.versions > 1 && history.bytes > 0
    self.differ = differ
    self.counter = counter
    self.loops = loops
  }

  @inlinable
  var count: Int { registry.withLock { $0.mailboxes.count } }

  /// How a subscriber starts: where it stands, or where it asks to resume.
  @usableFromInline
  enum Start: Sendable {
    /// The newest published state, read under the same lock as the registration (G5).
    case newest
    /// A state the source vouches for, which may be newer than the newest published one.
    case at(version: Int, snapshot: Snapshot<Section>)
    /// A version the subscriber says it holds: registered only if the history retains it (G11).
    case resuming(from: Int)
    /// A version older than the history, whose state the source derived again (a projection of the
    /// parent's retained state): its first batch is a full diff from `snapshot` to the newest.
    case derived(version: Int, snapshot: Snapshot<Section>)
  }

  /// Registers a subscriber from `start`; `nil` once the hub has finished, or when resuming from a
  /// version the history does not retain.
  ///
  /// A resume rebuilds the state at its version from the history's edits after the registry's lock is
  /// released, then registers under it if the version is still retained.
  @inlinable
  func register(_ start: Start)
    -> (mailbox: SubscriberMailbox<Section>, version: Int, snapshot: Snapshot<Section>)?
  {
    var rebuilt: Snapshot<Section>?
    if case .resuming(let from) = start {
      let rebuild = registry.withLock { $0.isFinished ? nil : $0.history.rebuild(to: from) }
      guard let state = rebuild?.state(applying: differ.applyEdits) else { return nil }
      rebuilt = state
    }
    return registry.withLock { registry in
      if registry.isFinished { return nil }
      let version: Int
      let snapshot: Snapshot<Section>
      var touched: Set<Section.Item.ID>?
      var refreshing = Set<Section.Item.ID>()
      switch start {
      case .newest: (version, snapshot) = (registry.newestVersion, registry.newestSnapshot)
      case .at(let at, let held): (version, snapshot) = (at, held)
      case .derived(let from, let held): (version, snapshot) = (from, held)
      case .resuming(let from):
        guard let held = rebuilt, let changes = registry.history.changes(since: from) else { return nil }
        (version, snapshot, touched, refreshing) = (from, held, changes.touched, changes.refreshing)
      }
      let mailbox = SubscriberMailbox(
        SubscriberMailbox<Section>.Machine(
          version: version, snapshot: snapshot, newest: registry.newest,
          newestVersion: registry.newestVersion, newestSnapshot: registry.newestSnapshot,
          unbatchedVersion: registry.unbatchedVersion, missedTouched: touched, missedRefreshing: refreshing),
        differ: differ, counter: counter, fullDiffs: fullDiffs)
      registry.add(mailbox)
      return (mailbox, version, snapshot)
    }
  }

  /// The versions the history retains, oldest first.
  @inlinable
  var retainedVersions: [Int] { registry.withLock { $0.history.versions } }

  /// What the history holds, estimated (``RetainedHistory/bytes``).
  @inlinable
  var retainedBytes: Int { registry.withLock { $0.history.bytes } }

  /// The newest published version and snapshot.
  @inlinable
  var newest: (version: Int, snapshot: Snapshot<Section>) {
    registry.withLock { ($0.newestVersion, $0.newestSnapshot) }
  }

  /// Offers `batch` to every subscriber (``offer(_:refreshing:edits:)``), outside the registry's lock.
  /// Consumers that wait are resumed, and the sinks the batch is due to handed to the hub's writers
  /// (``writeDue()``, in tasks of their own), both in the order of the subscribers' lanes
  /// (``SubscriptionLane``): the publisher calls no sink and waits for none. `edits` is what the history keeps of the batch (``historyEdits(of:)``),
  /// made by the caller off its own critical path when it can; made here when `nil` and the history keeps
  /// versions.
  /// - Complexity: O(*s*) for *s* subscribers, each O(1), plus O(*k* log *n*) for the batch's edits when
  ///   they are made here; O(*d* log *d*) more for the *d* subscribers it wakes or writes to when they are
  ///   not all in one lane.
  @inlinable
  func publish(
    _ batch: UpdateBatch<Section>, refreshing: Set<Section.Item.ID>, edits: [BatchEdit<Section>]? = nil
  ) {
    loops.publishing(self, batch, refreshing, edits)
  }

  /// Offers `batch` to every subscriber (``record(_:edits:refreshing:)``, then each subscriber's
  /// ``SubscriberMailbox/publish(_:refreshing:deferring:)``): resumes the consumers that wait in the first
  /// lane, and returns those woken in later lanes and the subscribers whose sinks are due a write, each in
  /// the order of lanes (the hub's order within a lane), for ``deliver(later:due:)``.
  /// - Complexity: as ``publish(_:refreshing:edits:)``.
  @inlinable
  func offer(_ batch: UpdateBatch<Section>, refreshing: Set<Section.Item.ID>, edits: [BatchEdit<Section>]?)
    -> (later: [SubscriberMailbox<Section>.Deferred], due: [SubscriberMailbox<Section>])
  {
    var due: [SubscriberMailbox<Section>] = []
    var lanes = LaneOrder()
    var later: [SubscriberMailbox<Section>.Deferred] = []
    let edits = edits ?? historyEdits(of: batch)
    // Made once for the history and for every subscriber that reads the batch's edits.
    if let edits { batch.keep(edits) }
    for mailbox in record(batch, edits: edits, refreshing: refreshing) {
      guard let lane = mailbox.publish(batch, refreshing: refreshing, deferring: &later) else { continue }
      lanes.add(lane, after: due.count)
      due.append(mailbox)
    }
    if let order = lanes.order { due = order.map { due[$0] } }
    if later.count > 1 {
      later = later.indices.sorted {
        later[$0].lane < later[$1].lane || (later[$0].lane == later[$1].lane && $0 < $1)
      }
      .map { later[$0] }
    }
    return (later, due)
  }

  /// Resumes the consumers `later`, then hands the subscribers `due` to the writers, each in order.
  /// - Complexity: O(*c* + *d*) for *c* consumers and *d* subscribers.
  @inlinable
  func deliver(later: [SubscriberMailbox<Section>.Deferred], due: [SubscriberMailbox<Section>]) {
    for consumer in later { consumer.waiter.resume(returning: consumer.delivery) }
    if !due.isEmpty { startWriters(writers.withLock { $0.enqueue(due) }) }
  }

  /// Starts `count` writers, each of which writes to the queued subscribers' sinks until none is left: on
  /// Dispatch's global queue, so that a sink that blocks holds a thread of its own and not one of the few
  /// that run every task; under a seeded schedule, as a task of the schedule.
  @usableFromInline
  func startWriters(_ count: Int) {
    for _ in 0..<count {
      if TaskSchedule.host != nil {
        Task.schedulable("writing to sinks") { self.loops.writing(self) }
      } else {
        DispatchQueue.global().async { self.loops.writing(self) }
      }
    }
  }

  /// A writer's work: claims the queued subscribers (one by one while few are queued) and makes their writes
  /// (``SubscriberMailbox/write()``), until none is queued.
  @inlinable @inline(__always)
  func writeDue() {
    while true {
      let claimed = writers.withLock { $0.claim() }
      if claimed.isEmpty { return }
      for mailbox in claimed { mailbox.write() }
    }
  }

  /// What the history keeps of `batch` to rebuild its state later (``Changeset/historyEdits``); `nil`
  /// when it keeps one version.
  /// - Complexity: O(*k* log *n*) for the *k* sections and items the batch names.
  @inlinable
  func historyEdits(of batch: UpdateBatch<Section>) -> [BatchEdit<Section>]? {
    keepsHistory ? differ.historyEdits(batch.changeset) : nil
  }

  /// The first half of a publish: under the registry's lock, `batch` becomes the newest state (a
  /// subscriber registered from now on starts from it) and enters the history; returns the subscribers
  /// registered before, to offer it to. Registrations and cancellations may come between the two halves.
  @inlinable
  func record(
    _ batch: UpdateBatch<Section>, edits: [BatchEdit<Section>]?, refreshing: Set<Section.Item.ID>
  ) -> [SubscriberMailbox<Section>] {
    registry.withLock { registry in
      registry.newest = batch
      registry.newestVersion = batch.toNumber
      registry.newestSnapshot = batch.snapshot
      registry.history.record(batch, edits: edits, refreshing: refreshing)
      return registry.mailboxes
    }
  }

  /// Brings every subscriber to `version` when the mutations since the published version `since`
  /// cancelled out (G4): no batch, but a subscriber that started from a state between them holds
  /// something else (see ``SubscriberStateMachine/cancelledOut(to:snapshot:since:touched:)``). New subscribers
  /// start at `version`, and the history keeps it: its state is the newest published one.
  /// - Complexity: O(*s*) for *s* subscribers; each composes its own catch-up when it next asks.
  @inlinable
  func cancelledOut(to version: Int, snapshot: Snapshot<Section>, since: Int, touched: Set<Section.Item.ID>?)
  {
    let mailboxes = registry.withLock { registry in
      registry.newestVersion = version
      registry.newestSnapshot = snapshot
      registry.history.recordUnchanged(at: version)
      return registry.mailboxes
    }
    for mailbox in mailboxes {
      mailbox.cancelledOut(to: version, snapshot: snapshot, since: since, touched: touched)
    }
  }

  /// The source reached `version` by mutations after the newest published one that cancelled out, with
  /// no subscriber between them (G4): its state is the newest published one. Subscribers that hold that
  /// state hold `version` too (G13), and may resume from it: the history keeps it.
  /// - Complexity: O(*s*) for *s* subscribers.
  @inlinable
  func reachedWithoutBatch(to version: Int) {
    let mailboxes = registry.withLock { registry in
      registry.unbatchedVersion = max(registry.unbatchedVersion, version)
      registry.history.recordUnchanged(at: version)
      return registry.mailboxes
    }
    for mailbox in mailboxes { mailbox.reachedWithoutBatch(to: version) }
  }

  /// Ends a subscription and releases it; idempotent, and safe before, during or after a wait.
  /// - Complexity: O(1) expected (``Registry/remove(_:)``).
  @inlinable
  func cancel(_ mailbox: SubscriberMailbox<Section>) {
    registry.withLock { registry in registry.remove(mailbox) }
    mailbox.end()
  }

  /// Ends every subscription; no new ones are accepted.
  @inlinable
  func finish() {
    let mailboxes = registry.withLock { registry in
      registry.isFinished = true
      return registry.removeAll()
    }
    for mailbox in mailboxes { mailbox.end() }
  }
}

/// A hub's loops over its subscribers: a publish's (``SubscriptionHub/offer(_:refreshing:edits:)``, then
/// ``SubscriptionHub/deliver(later:due:)``) and a writer's (``SubscriptionHub/writeDue()``), as closures
/// made where this value is made.
///
/// A source's own methods run unspecialized, generic over its section, even in a client's optimized build:
/// there, every subscriber a loop visits costs lookups of generic types' metadata and copies through value
/// witnesses. An initializer a client calls is specialized for the client's section type, and so are the
/// closures it makes: a source makes these in its initializer (a ``BasicDataSource`` or a
/// ``Broadcaster``), or takes them from what was made where a client named its types (a projection's
/// ``ProjectionSteps``, a composite's ``CompositePlacing``), and its hub runs them.
@usableFromInline
package struct HubLoops<Section: SectionType>: Sendable {
  @usableFromInline typealias Publishing =
    @Sendable (
      SubscriptionHub<Section>, UpdateBatch<Section>, Set<Section.Item.ID>, [BatchEdit<Section>]?
    ) -> Void
  @usableFromInline let publishing: Publishing
  @usableFromInline let writing: @Sendable (SubscriptionHub<Section>) -> Void

  @inlinable
  package init() {
    publishing = { hub, batch, refreshing, edits in
      let (later, due) = hub.offer(batch, refreshing: refreshing, edits: edits)
      hub.deliver(later: later, due: due)
    }
    writing = { hub in hub.writeDue() }
  }
}

/// The lanes of the subscribers a publish hands to the writers, in the hub's order: the first one seen,
/// and all of them once one differs, so that a publish whose subscribers share one lane pays nothing for
/// them.
@usableFromInline
struct LaneOrder: Sendable {
  @usableFromInline var first: SubscriptionLane?
  @usableFromInline var all: [SubscriptionLane] = []

  @inlinable init() {}

  /// The next subscriber (`count` came before it) is in `lane`.
  /// - Complexity: O(1) amortized; O(*count*) once, for the first that differs.
  @inlinable
  mutating func add(_ lane: SubscriptionLane, after count: Int) {
    if !all.isEmpty {
      all.append(lane)
    } else if let first, lane != first {
      all = Array(repeating: first, count: count)
      all.append(lane)
    } else {
      first = lane
    }
  }

  /// The subscribers' places in the order of lanes, lowest first, keeping the hub's order within a lane;
  /// `nil` when they share one lane.
  /// - Complexity: O(*c* log *c*) for *c* subscribers when they do not share one lane; O(1) otherwise.
  @inlinable
  var order: [Int]? {
    if all.isEmpty { return nil }
    return all.indices.sorted { all[$0] < all[$1] || (all[$0] == all[$1] && $0 < $1) }
  }
}
