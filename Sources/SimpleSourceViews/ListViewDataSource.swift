// The main-actor data source of one view: follows a DataSourceType, keeps its own copy, applies batches.

public import SimpleSourceCore
package import Foundation

/// Drives one ``ListView`` from any ``DataSourceType``: it keeps its own main-actor copy of the sections,
/// answers the view's synchronous questions from it (through a ``ViewFactory`` for cells, headers and
/// footers), and applies every batch in order through a ``ViewUpdate`` policy.
///
/// ```swift
/// let viewDataSource = ListViewDataSource(view: tableView, factory: factory, update: .animated())
/// await viewDataSource.follow(employees)
/// ```
///
/// Several views can follow one source, each through its own `ListViewDataSource`. The subscription is
/// owned by this object: it ends with ``stop()`` or when the object is deallocated.
///
/// **Promises**, for each view:
/// - The first thing shown is the source's snapshot at ``follow(_:pacing:)``, with `reloadData()`.
/// - Batches are applied in the source's version order, one at a time; within a batch each
///   ``ChangeStage`` is one `performBatchUpdates` with that stage's data swapped in inside it (S5).
/// - Changed items are reconfigured when their reuse identifier stays the same, and reloaded when it
///   changes (UIKit cannot reconfigure a cell into another class, R5).
/// - Diffs never run on the main actor (G9); this object only applies them.
/// - With a ``reorderingDelegate``, a move the user makes is shown at once, is never moved again by the
///   batch that echoes it, and writes from other tasks made meanwhile arrive after it (see
///   *Driving list views*).
@MainActor
public final class ListViewDataSource<Section: SectionType, View: ListView> {
  /// The item type.
  public typealias Item = Section.Item

  /// What the view shows: the source's snapshot, or a stage's, as of the last batch applied (with the
  /// user's moves on their way). Its lookups never copy the list, however long.
  public private(set) var shown = Snapshot<Section>()
  /// The sections the view shows.
  /// - Complexity: O(1) after a whole replacement; O(*n*) the first time after a batch derived from the
  ///   mutation log (see ``Snapshot/sections``). The view's questions below never need it.
  public var sections: [Section] { shown.sections }
  /// The version of the source that the view shows (plus any moves of the user's still on their way);
  /// `nil` before it follows a source.
  public var version: Version? { counter.map { $0.version(state.version) } }
  /// The view; held weakly, as UIKit views hold their data sources weakly in turn. Set by the
  /// initialiser or by ``attach(_:reloading:)``.
  public private(set) weak var view: View?
  /// Makes and configures the view's cells, headers and footers.
  public let factory: ViewFactory<Section, View>
  /// How batches are applied.
  public var update: ViewUpdate<Section>
  /// Applies the moves the user makes in the view; `nil` (the default) disables reordering.
  public var reorderingDelegate: (any ReorderingDelegate<Section>)?
  /// Decides which items the user may move, when reordering is enabled; every item by default.
  public var canMoveItem: (@MainActor (_ item: Item, _ position: ItemPosition) -> Bool)?
  /// Called on the main actor when the reordering delegate rejects a move; the view then shows the
  /// source as it is.
  public var reorderingFailed: (@MainActor (_ move: InteractiveMove<Section>, _ error: any Error) -> Void)?
  /// What the user does with rows and sections (select, display, heights, editing, swipes, accessory
  /// taps), as typed closures per reuse identifier with data-source-wide fallbacks.
  public let interactions = ListInteractions<Section>()
  /// The number of batches applied (including reconciliations after the user's moves).
  public private(set) var batchCount = 0
  /// How many batches were shown with `reloadData()` (unanimated policy, off screen, or too large).
  public private(set) var reloadCount = 0

  typealias State = ViewStateMachine<InteractiveMove<Section>, CheckedContinuation<Void, Never>>

  // Guard map: every field is the main actor's; no lock. Its tasks all run on the main actor and
  // share `state` (the view state machine): the follow task of each subscription (dropped when its
  // epoch is not the current one), a task per user move that writes it through the reordering delegate
  // (not cancelled with this object, so the user's write lands), and a reconciliation task; each takes
  // the machine's gate before touching the view, so a batch, a drag and a reconciliation never overlap
  // across a suspension.
  private let differ: Differ<Section>
  private var following: Task<Void, Never>?
  /// Callers of ``showing(_:)``, until the view shows their snapshot.
  private var showingWaiters = ParkedWaiters<Snapshot<Section>, CheckedContinuation<Bool, Never>>()
  /// The source's state as of ``version``, as the subscription delivered it.
  private var sourceSnapshot = Snapshot<Section>()
  /// The type of the source followed, which ``InvalidBatch`` names.
  private var sourceName = ""
  /// The counter of the followed source's versions, which a reordering delegate's answer is checked against.
  private var counter: VersionCounter?
  /// Every decision its tasks share: subscriptions, the gate, the user's moves, waiters.
  private var state = State()

  /// Creates a data source for `view`.
  /// - Parameters:
  ///   - view: The view to drive; held weakly.
  ///   - factory: Makes the view's cells, headers and footers.
  ///   - update: How batches are applied; animated by default.
  @inlinable
  public convenience init(
    view: View, factory: ViewFactory<Section, View>, update: ViewUpdate<Section> = .animated()
  ) {
    self.init(view: view, factory: factory, update: update, differ: Differ())
  }

  /// Creates a data source whose view is attached later, with ``attach(_:reloading:)``: the UIKit skin learns its
  /// view from the first question the view asks.
  @inlinable
  public convenience init(factory: ViewFactory<Section, View>, update: ViewUpdate<Section> = .animated()) {
    self.init(view: nil, factory: factory, update: update, differ: Differ())
  }

  /// The public initialisers are inlinable so that `differ`, which diffs the user's moves against batches,
  /// is specialised by the client's build (see ``Differ``).
  @usableFromInline
  init(view: View?, factory: ViewFactory<Section, View>, update: ViewUpdate<Section>, differ: Differ<Section>)
  {
    self.view = view
    self.factory = factory
    self.update = update
    self.differ = differ
  }

  /// Makes `view` the view this data source drives, and reloads it. Does nothing if it already is.
  /// - Parameters:
  ///   - view: The view to drive from now on.
  ///   - reloading: Pass `false` when the view is asking its data source a question right now
  ///     (the UIKit skin attaches from `numberOfSections(in:)`), so it is not reloaded from inside.
  public func attach(_ view: View, reloading: Bool = true) {
    guard self.view !== view else { return }
    self.view = view
    if reloading { view.reloadData() }
  }

  // A plain deinit, not `isolated deinit`: the latter crashes the compiler in optimised builds of a generic
  // @MainActor class for deployment targets below iOS 18.4 (as ViewDataSourceAdapter's deinit notes). The
  // Task and the state machine are Sendable values that no other reference can reach any more.
  deinit {
    following?.cancel()
    for waiter in state.end() { waiter.resume() }
  }

  /// Subscribes to `source`: shows its current snapshot at once, then applies every batch.
  /// Following another source ends the previous subscription.
  public func follow(_ source: some DataSourceType<Section>, pacing: Pacing = .immediate) async {
    following?.cancel()
    let current = state.beginFollowing()
    sourceName = String(describing: type(of: source))
    let subscription = await source.subscribe(pacing: pacing)
    // A later follow() or stop() while this one subscribed wins.
    guard let waiters = state.subscribed(epoch: current, version: subscription.version.number) else { return }
    counter = subscription.counter
    sourceSnapshot = subscription.snapshot
    shown = subscription.snapshot
    view?.reloadData()
    for waiter in waiters { waiter.resume() }
    following = Task.schedulable("following a source") { @MainActor [weak self] in
      await subscription.follow { event in
        guard let self, self.state.epoch == current else { return false }
        if case .batch(let batch) = event { await self.receive(batch, epoch: current) }
        return true
      }
    }
  }

  /// Ends the subscription; the view keeps what it shows.
  public func stop() {
    following?.cancel()
    following = nil
    state.stop()
  }

  // MARK: - The view's questions

  /// The number of sections.
  /// - Complexity: O(1).
  package var numberOfSections: Int { shown.sectionCount }
  /// The number of items in a section.
  /// - Complexity: O(1).
  package func numberOfItems(inSection section: Int) -> Int { shown.itemCount(inSection: section) }
  /// The item at a position.
  /// - Complexity: O(log *n*) at most (see ``Snapshot/subscript(_:)``).
  public func item(at position: ItemPosition) -> Item { shown[position] }
  /// The section at an index, with its items (for its header and footer).
  /// - Complexity: O(1) after a whole replacement; O(size of the section) after a logged batch.
  public func section(at index: Int) -> Section { shown.section(at: index) }

  /// The configured cell for the item at `position`, made by the ``factory``.
  package func cell(at position: ItemPosition, in view: View) -> View.Cell {
    factory.cell(for: item(at: position), at: position, in: view) { [weak self] itemID, action in
      self?.cellDidSend(action, itemID: itemID)
    }
  }

  /// The position of the item `id` in what the view shows, or `nil` if it shows no such item.
  /// - Complexity: O(1) when the view shows the source as it is (the source snapshot's index, checked);
  ///   O(*n*) while moves of the user's are on their way to the source.
  public func position(ofShownItem id: Item.ID) -> ItemPosition? {
    if let position = sourceSnapshot.position(ofItem: id), isShown(position), item(at: position).id == id {
      return position
    }
    for sectionIndex in 0..<shown.sectionCount {
      if let itemIndex = shown.itemIDs(inSection: sectionIndex).firstIndex(of: id) {
        return ItemPosition(section: sectionIndex, item: itemIndex)
      }
    }
    return nil
  }

  /// The text header of a section, if the factory gives one.
  package func headerTitle(inSection index: Int) -> String? {
    factory.headerTitle(for: section(at: index), at: index)
  }
  /// The text footer of a section, if the factory gives one.
  package func footerTitle(inSection index: Int) -> String? {
    factory.footerTitle(for: section(at: index), at: index)
  }

  /// The configured supplementary view of `kind` at `position` (`[section, 0]` for headers and footers),
  /// or `nil` if the factory has none of that kind.
  package func supplementaryView(ofKind kind: SupplementaryKind, at position: ItemPosition, in view: View)
    -> View.SupplementaryView?
  {
    factory.supplementaryView(ofKind: kind, for: section(at: position.section), at: position, in: view)
  }

  /// The supplementary view UIKit asks for at `indexPath`, which may have one index (a view of a whole
  /// section, or a layout-wide boundary item) or two; `nil` when the path names no section shown, or the
  /// factory registers no view of `kind`.
  ///
  /// A one-index path `[s]` is answered as section `s`, at item 0. Never traps on a malformed path.
  package func supplementaryView(ofKind kind: SupplementaryKind, at indexPath: IndexPath, in view: View)
    -> View.SupplementaryView?
  {
    let oneIndex = indexPath.count == 1 ? ItemPosition(section: indexPath[0], item: 0) : nil
    guard let position = ItemPosition(exactly: indexPath) ?? oneIndex,
      (0..<shown.sectionCount).contains(position.section)
    else { return nil }
    return supplementaryView(ofKind: kind, at: position, in: view)
  }

  /// Returns once the view shows `snapshot` exactly.
  ///
  /// - Returns: `true` once it does; `false` when the waiting task was cancelled first.
  @discardableResult
  public func showing(_ snapshot: Snapshot<Section>) async -> Bool {
    await cancellableWait { continuation in
      isShowing(snapshot)
        ? .resume(continuation, reached: true) : .wait(id: showingWaiters.park(continuation, until: snapshot))
    } cancel: { @MainActor id in
      if let parked = id.parked { self.showingWaiters.cancel(parked)?.resume(returning: false) }
    }
  }

  /// Whether the view shows `snapshot`'s content exactly.
  private func isShowing(_ snapshot: Snapshot<Section>) -> Bool {
    shown.hasSameContent(as: snapshot)
  }

  // MARK: - Reordering

  /// Whether the user may move the item at `position`: reordering is enabled and ``canMoveItem`` allows it.
  public func canMoveItem(at position: ItemPosition) -> Bool {
    // A pattern, not `!= nil`: comparing an optional parameterized existential calls a generic function
    // over it, which needs runtime support that iOS 15 lacks (.ci/availability-lint).
    guard case .some = reorderingDelegate else { return false }
    return canMoveItem?(item(at: position), position) ?? true
  }

  /// Holds batches back while the user drags: the view is not updated under the user's finger. Batches
  /// are not lost: the source composes what happens meanwhile (G6), and it is applied at
  /// ``endInteractiveMove()``.
  ///
  /// Calls nest; each is balanced by one ``endInteractiveMove()``. A ``ListView`` of your own calls it
  /// when the user picks an item up.
  /// - Complexity: O(1).
  public func beginInteractiveMove() { state.beginInteractiveMove() }

  /// Ends a hold begun with ``beginInteractiveMove()``; the batches held back are applied. An end with no
  /// hold begun does nothing.
  /// - Complexity: O(1), then the held batches are applied by the follow task.
  public func endInteractiveMove() {
    for waiter in state.endInteractiveMove() { waiter.resume() }
  }

  /// Records a move the user made in the view, which has already moved the cell (UIKit's
  /// `moveItemAt`/`moveRowAt` data source call).
  ///
  /// The sections change at once to match the view, and the ``reorderingDelegate`` applies the move to
  /// the source by ids (``InteractiveMove``). Until the source's batches include it, every batch is
  /// rebased onto the sections with the move, so:
  /// - this view never receives the move again (echo suppression), while other views receive it as a move;
  /// - writes other tasks made meanwhile arrive as they are, diffed against what this view shows;
  /// - if the delegate throws, the view is brought back to the source's state, and ``reorderingFailed``
  ///   is called.
  ///
  /// - Precondition: Reordering is enabled (``reorderingDelegate`` is set) and the positions are valid,
  ///   as UIKit guarantees for the moves it reports.
  /// - Complexity: O(*n*) to show it (the shown sections are rebuilt with the move), then the reordering
  ///   delegate's write in a task of its own.
  public func moveItem(at source: ItemPosition, to destination: ItemPosition) {
    guard let reorderingDelegate else {
      preconditionFailure("SimpleSource: moveItem(at:to:) needs a reorderingDelegate")
    }
    let move: InteractiveMove<Section>
    do {
      var sections = shown.sections
      move = try InteractiveMove(in: sections, from: source, to: destination)
      try move.apply(to: &sections)
      shown = Snapshot(trustedLazily: sections)
    } catch {
      preconditionFailure("SimpleSource: the view reported an impossible move: \(error)")
    }
    if source == destination { return }
    let serial = state.userMoved(move)
    // The user's write must land even if this object goes away, so the task is not cancelled with it.
    Task.schedulable("a list view data source") { [weak self] in
      do {
        let included = try await reorderingDelegate.reorder(move)
        guard let self else { return }
        if let counter = self.counter { try VersionError.check(included, against: counter) }
        self.moveLanded(serial, in: included.number)
      } catch {
        self?.moveFailed(serial, error)
      }
    }
  }

  /// Returns once every move the user made so far has been applied to the source by the
  /// ``reorderingDelegate``, or rejected. Then `await source.settled()` covers them too.
  ///
  /// - Returns: `true` then; `false` when the waiting task was cancelled first.
  @discardableResult
  public func settled() async -> Bool {
    await withTaskCancellationHandler {
      while state.hasUnlandedMoves {
        if Task.isCancelled { return false }
        await withCheckedContinuation { state.parkUntilLanded($0)?.resume() }
      }
      return true
    } onCancel: {
      // Parked waiters ask again when woken; the cancelled one then returns.
      Task.schedulable("waking landing waiters") { @MainActor in
        for waiter in self.state.wakeLandingWaiters() { waiter.resume() }
      }
    }
  }

  private func moveLanded(_ serial: Int, in includedIn: Int) {
    let (reconcile, waiters) = state.moveLanded(serial, in: includedIn)
    if reconcile { reconcileSoon() }
    for waiter in waiters { waiter.resume() }
  }

  private func moveFailed(_ serial: Int, _ error: any Error) {
    let (move, reconcile, waiters) = state.moveFailed(serial)
    if reconcile { reconcileSoon() }
    if let move { reorderingFailed?(move, error) }
    for waiter in waiters { waiter.resume() }
  }

  /// Brings the view to the source's state plus the moves still pending, once no batch is being applied
  /// and no drag is under way (a batch being applied does the same when it ends, and this finds nothing).
  private func reconcileSoon() {
    let current = state.epoch
    Task.schedulable("a list view data source") { [weak self] in
      guard let self, await self.admit(.reconcile, epoch: current) == .reconcile else { return }
      await self.reconcile(through: self.state.version, epoch: current)
      self.leave()
    }
  }

  // MARK: - Applying

  /// Waits at the gate until `work` is admitted or dropped.
  private func admit(_ work: State.Work, epoch current: Int) async -> State.Admission {
    while true {
      let admission = state.admit(work, epoch: current)
      guard admission == .wait else { return admission }
      await withCheckedContinuation { state.park($0)?.resume() }
    }
  }

  /// Opens the gate after applying.
  private func leave() {
    for waiter in state.leave() { waiter.resume() }
  }

  private func receive(_ batch: UpdateBatch<Section>, epoch current: Int) async {
    let admission = await admit(.batch(to: batch.toNumber), epoch: current)
    guard admission != .drop else { return }
    defer { leave() }
    sourceSnapshot = batch.snapshot
    if admission == .apply {
      apply(batch)
      finish(at: batch.toNumber, reconciled: false)
      return
    }
    await reconcile(through: batch.toNumber, epoch: current)
  }

  /// Shows `sourceSnapshot` with the pending moves replayed on it, diffed off the main actor against what
  /// the view shows. Recomputes if the user moves something while the diff runs.
  private func reconcile(through newVersion: Int, epoch current: Int) async {
    while true {
      let edits: Int
      let moves: [InteractiveMove<Section>]
      switch state.beginReconcile(epoch: current) {
      case .wait:
        await withCheckedContinuation { state.parkUntilDragsEnd($0)?.resume() }
        continue
      case .drop: return
      case .compute(let atEdits, let pending): (edits, moves) = (atEdits, pending)
      }
      let changeset = await Self.rebase(
        shown: shown, onto: sourceSnapshot, replaying: moves, differ: differ)
      switch state.reconcileComputed(epoch: current, edits: edits) {
      case .drop: return
      case .retry: continue
      case .apply:
        if !changeset.isEmpty, let counter {
          apply(UpdateBatch(from: state.version, to: newVersion, of: counter, changeset: changeset))
        }
        finish(at: newVersion, reconciled: true)
        return
      }
    }
  }

  @concurrent
  private nonisolated static func rebase(
    shown: Snapshot<Section>, onto source: Snapshot<Section>, replaying moves: [InteractiveMove<Section>],
    differ: Differ<Section>
  ) async -> Changeset<Section> {
    var target = source.sections
    for (index, move) in moves.enumerated() {
      // A move whose item or section is gone by now is dropped; the source rejects it too. The first is
      // resolved with the snapshot's lookups; later ones (rare: several drops on their way) by a scan.
      guard let (from, to) = try? (index == 0 ? move.resolve(in: source) : move.resolve(in: target)) else {
        continue
      }
      target[to.section].items.insert(target[from.section].items.remove(at: from.item), at: to.item)
    }
    return differ.diff(shown, differ.index(target), [])
  }

  private func finish(at newVersion: Int, reconciled: Bool) {
    // A move whose delegate returned while this batch was being rebased is included now: replaying it
    // on later batches would undo later writes that move the same item.
    if state.finished(at: newVersion, reconciled: reconciled) { reconcileSoon() }
    guard !showingWaiters.isEmpty else { return }
    let shown = self.shown
    for waiter in showingWaiters.take(where: { shown.hasSameContent(as: $0) }) {
      waiter.resume(returning: true)
    }
  }

  private func apply(_ batch: UpdateBatch<Section>) {
    batchCount += 1
    guard let view else {
      shown = batch.snapshot
      return
    }
    let changes = batch.changeset.stages.reduce(0) { $0 + $1.sectionChanges.count + $1.itemChanges.count }
    if !view.isOnScreen || update.largeBatchThreshold.map({ changes > $0 }) == true {
      reload(batch, in: view)
      return
    }
    switch update.kind {
    case .unanimated:
      reload(batch, in: view)
    case .animated(let style, let animations):
      performStages(batch, in: view, refreshing: style, animations: animations)
    case .custom(let body):
      var applied = false
      body(
        ViewUpdate.Context(
          view: view, batch: batch,
          applyStages: { [unowned self] style, animations, perform in
            precondition(!applied, "SimpleSource: a custom ViewUpdate applied a batch twice")
            applied = true
            self.performStages(batch, in: view, refreshing: style, animations: animations, with: perform)
          },
          reload: { [unowned self] in
            precondition(!applied, "SimpleSource: a custom ViewUpdate applied a batch twice")
            applied = true
            self.reload(batch, in: view)
          }))
      precondition(applied, "SimpleSource: a custom ViewUpdate must apply each batch")
    }
  }

  private func performStages(
    _ batch: UpdateBatch<Section>, in view: View, refreshing style: RefreshStyle,
    animations: ChangeAnimations?, with perform: ViewUpdate<Section>.Context.StagePerformer? = nil
  ) {
    var verified: [StageCalls]?
    if let report = update.verification {
      switch verify(batch, in: view, refreshing: style) {
      case .success(let calls): verified = calls
      case .failure(let invalid):
        report(invalid)
        reload(batch, in: view)
        return
      }
    }
    for (index, stage) in batch.changeset.stages.enumerated() {
      let update = verified?[index] ?? calls(for: stage, refreshing: style, in: view, before: shown)
      let swap: @MainActor () -> Void = { self.shown = stage.state }
      if let perform {
        let swapped = SwapCheck()
        perform(update) {
          precondition(!swapped.done, "SimpleSource: a stage performer swapped the data twice")
          swapped.done = true
          swap()
        }
        precondition(
          swapped.done, "SimpleSource: a stage performer must call updateData inside its update block")
      } else if let animations {
        view.performBatchUpdates(update, animations: animations, updateData: swap)
      } else {
        view.performBatchUpdates(update, animated: false, updateData: swap)
      }
    }
  }

  /// The calls ``performStages(_:in:refreshing:animations:with:)`` makes for each stage of `batch`, once
  /// each has passed UIKit's rules applied to what the view shows; the first stage that breaks one, as an
  /// ``InvalidBatch``, otherwise.
  /// - Complexity: O(*n*) to copy what is shown into the rules model, plus the stages' calls.
  private func verify(_ batch: UpdateBatch<Section>, in view: View, refreshing style: RefreshStyle)
    -> Result<[StageCalls], InvalidBatch<Section>>
  {
    var reference = ReferenceListView(shown.sections)
    var before = shown
    var verified: [StageCalls] = []
    for (index, stage) in batch.changeset.stages.enumerated() {
      let update = calls(for: stage, refreshing: style, in: view, before: before)
      do {
        try reference.performBatchUpdates(
          update, data: stage.state.sections, requestedRefreshes: batch.changeset.forcedRefreshes)
      } catch {
        return .failure(InvalidBatch(error: error, batch: batch, stage: index, source: sourceName))
      }
      verified.append(update)
      before = stage.state
    }
    return .success(verified)
  }

  /// The stage's calls on the state `before` it, with reconfigures that would change a cell's reuse
  /// identifier turned into reloads: UIKit can only reconfigure a cell into the same class (R5).
  private func calls(
    for stage: ChangeStage<Section>, refreshing style: RefreshStyle, in view: View, before: Snapshot<Section>
  ) -> StageCalls {
    var update = stage.calls(refreshing: style)
    guard !update.reconfigureItems.isEmpty else { return update }
    var reconfigured: [ItemPosition] = []
    for position in update.reconfigureItems {
      guard before.contains(position) else {
        update.reloadItems.append(position)
        continue
      }
      let old = before[position]
      let data = stage.state
      if data.contains(position), case let new = data[position], new.id == old.id,
        factory.reuseIdentifier(for: old, in: view) == factory.reuseIdentifier(for: new, in: view)
      {
        reconfigured.append(position)
      } else {
        update.reloadItems.append(position)
      }
    }
    update.reconfigureItems = reconfigured
    return update
  }

  private func reload(_ batch: UpdateBatch<Section>, in view: View) {
    reloadCount += 1
    shown = batch.snapshot
    view.reloadData()
  }
}

/// Whether a stage performer called its `updateData`, shared with the escaping closure it was given.
@MainActor
private final class SwapCheck {
  var done = false
}
