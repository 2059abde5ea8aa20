// Consumes a subscription, checks every batch against the contract, and replays it on a reference view.

public import SimpleSource

/// Consumes a `Subscription` and checks each batch as it arrives:
///
/// - **G1**: its `from` is the previous batch's `to` (the subscription's version for the first);
/// - **G4**: it is not empty;
/// - **G2, G3**: its stages, applied to a `ReferenceListView` showing the previous state, pass UIKit's
///   rules without warnings and show the batch's snapshot exactly.
///
/// Violations are collected in ``violations``. Await ``showing(_:)`` instead of sleeping.
/// ``pause()`` stops consuming (the subscription's batches then compose, G6) until ``resume()``.
public actor BatchRecorder<Section: SectionType> {
  // Guard map: every field is the actor's, no lock. The consumer task runs on the actor (`consume`): it
  // reads the subscription, checks each batch, applies it to `view` and wakes the waiters it satisfies.

  /// Every batch received, in order.
  public private(set) var batches: [UpdateBatch<Section>] = []
  /// The reference view, showing the replayed state.
  public private(set) var view: ReferenceListView<Section>
  /// The `to` of the last batch (or the subscription's version).
  public private(set) var version: Version
  /// Every broken promise, described.
  public private(set) var violations: [String] = []
  /// Whether the stream has finished.
  package private(set) var isFinished = false

  private let refreshStyle: RefreshStyle
  private var isPaused = false
  private var resumeWaiters: [CheckedContinuation<Void, Never>] = []
  /// Callers of ``showing(_:)``, until the view shows their snapshot, and of ``finished()`` (`nil`).
  private var waiters = ParkedWaiters<Snapshot<Section>?, CheckedContinuation<Bool, Never>>()
  private var consumer: Task<Void, Never>?

  /// Starts consuming `subscription`.
  /// - Parameters:
  ///   - subscription: The subscription to consume.
  ///   - refreshStyle: How the reference view refreshes changed items.
  ///   - paused: Whether to start paused: the subscription is held but not consumed.
  public init(
    _ subscription: Subscription<Section>, refreshStyle: RefreshStyle = .reload, paused: Bool = false
  )
    async
  {
    view = ReferenceListView(subscription.snapshot)
    version = subscription.version
    self.refreshStyle = refreshStyle
    isPaused = paused
    let batches = subscription.batches
    consumer = Task.schedulable("recording batches") { await self.consume(batches) }
  }

  deinit { consumer?.cancel() }

  /// Stops consuming after the current batch.
  public func pause() { isPaused = true }

  /// Consumes again.
  public func resume() {
    isPaused = false
    for waiter in resumeWaiters { waiter.resume() }
    resumeWaiters = []
  }

  /// Cancels the consuming task: the subscription ends, paused or not.
  public func cancel() {
    consumer?.cancel()
    resume()
  }

  /// Returns once the replayed state shows `snapshot` exactly.
  ///
  /// - Returns: `true` then; `false` when the stream finished first or the waiting task was cancelled.
  @discardableResult
  public func showing(_ snapshot: Snapshot<Section>) async -> Bool {
    await cancellableWait { continuation in
      if view.shows(snapshot.sections) { return .resume(continuation, reached: true) }
      if isFinished { return .resume(continuation, reached: false) }
      return .wait(id: waiters.park(continuation, until: snapshot))
    } cancel: { id in
      await self.cancelWait(id)
    }
  }

  /// Returns once the stream has finished.
  ///
  /// - Returns: `true` then; `false` when the waiting task was cancelled first.
  @discardableResult
  public func finished() async -> Bool {
    await cancellableWait { continuation in
      isFinished ? .resume(continuation, reached: true) : .wait(id: waiters.park(continuation, until: nil))
    } cancel: { id in
      await self.cancelWait(id)
    }
  }

  /// Resumes the waiter `id` names with `false`, if it still waits: its task was cancelled.
  private func cancelWait(_ id: WaiterID) {
    guard let parked = id.parked else { return }
    waiters.cancel(parked)?.resume(returning: false)
  }

  private func consume(_ batches: AsyncStream<UpdateBatch<Section>>) async {
    var iterator = batches.makeAsyncIterator()
    while true {
      if isPaused { await withCheckedContinuation { resumeWaiters.append($0) } }
      guard let batch = await iterator.next() else { break }
      receive(batch)
    }
    isFinished = true
    for waiter in waiters.take(where: { $0 == nil }) { waiter.resume(returning: true) }
    for waiter in waiters.take(where: { _ in true }) { waiter.resume(returning: false) }
  }

  private func receive(_ batch: UpdateBatch<Section>) {
    let number = batches.count
    batches.append(batch)
    if batch.from != version {
      violations.append("G1: batch \(number) starts at \(batch.from), expected \(version)")
    }
    if batch.to.number <= batch.from.number {
      violations.append("G1: batch \(number) goes from \(batch.from) to \(batch.to)")
    }
    if batch.changeset.isEmpty { violations.append("G4: batch \(number) is empty") }
    version = batch.to
    let warningsBefore = view.warnings.count
    do {
      try view.apply(batch.changeset, refreshing: refreshStyle)
    } catch {
      violations.append("G3: batch \(number) \(batch.from)→\(batch.to) rejected: \(error)")
      view.reloadData(batch.snapshot.sections)
    }
    if view.warnings.count > warningsBefore {
      violations.append("G3: batch \(number) warnings: \(view.warnings[warningsBefore...])")
    }
    if !view.shows(batch.snapshot.sections) {
      violations.append("G2: batch \(number) does not replay to its snapshot")
      view.reloadData(batch.snapshot.sections)
    }
    let view = self.view
    for waiter in waiters.take(where: { $0.map { view.shows($0.sections) } ?? false }) {
      waiter.resume(returning: true)
    }
  }
}
