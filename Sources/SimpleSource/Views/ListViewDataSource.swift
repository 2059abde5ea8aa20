// The main-actor data source of one view: follows a DataSourceType, keeps its own copy, applies batches.

/// Drives one ``ListView`` from any ``DataSourceType``: it keeps its own main-actor copy of the sections,
/// answers the view's synchronous questions from it, and applies every batch in order.
///
/// ```swift
/// let dataSource = ListViewDataSource(view: tableView, update: .animated())
/// await dataSource.follow(employees)
/// ```
///
/// Several views can follow one source, each through its own `ListViewDataSource`. The subscription is
/// owned by this object: it ends with ``stop()`` or when the object is deallocated.
@MainActor
public final class ListViewDataSource<Section: SectionType, View: ListView> {
  /// The item type.
  public typealias Item = Section.Item

  /// The sections the view shows, as of ``version``.
  public private(set) var sections: [Section] = []
  /// The version of the source that the view shows.
  public private(set) var version = 0
  /// The view; held weakly, as UIKit views hold their data sources weakly in turn.
  public private(set) weak var view: View?
  /// How batches are applied.
  public var update: ViewUpdate<Section>
  /// The number of batches applied, and how many of them fell back to `reloadData()`.
  public private(set) var batchCount = 0
  /// How many batches were shown with `reloadData()` (unanimated policy, off screen, or too large).
  public private(set) var reloadCount = 0

  private var following: Task<Void, Never>?
  private var showingWaiters: [(sections: [Section], continuation: CheckedContinuation<Void, Never>)] = []

  /// Creates a data source for `view`.
  public init(view: View, update: ViewUpdate<Section> = .animated()) {
    self.view = view
    self.update = update
  }

  isolated deinit { following?.cancel() }

  /// Subscribes to `source`: shows its current snapshot at once, then applies every batch.
  /// Following another source ends the previous subscription.
  public func follow(_ source: some DataSourceType<Section>, pacing: Pacing = .immediate) async {
    following?.cancel()
    let subscription = await source.subscribe(pacing: pacing)
    sections = subscription.snapshot.sections
    version = subscription.version
    view?.reloadData()
    let batches = subscription.batches
    following = Task { [weak self] in
      for await batch in batches {
        guard let self else { return }
        self.apply(batch)
      }
    }
  }

  /// Ends the subscription; the view keeps what it shows.
  public func stop() {
    following?.cancel()
    following = nil
  }

  // MARK: - The view's questions

  /// The number of sections.
  public var numberOfSections: Int { sections.count }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { sections[section].items.count }
  /// The item at a position.
  public func item(at position: ItemPosition) -> Item { sections[position.section].items[position.item] }
  /// The section at an index (for its header and footer).
  public func section(at index: Int) -> Section { sections[index] }

  /// Returns once the view shows `snapshot` exactly.
  public func waitUntilShowing(_ snapshot: Snapshot<Section>) async {
    if SectionStore.same(sections, snapshot.sections) { return }
    await withCheckedContinuation { showingWaiters.append((snapshot.sections, $0)) }
  }

  // MARK: - Applying

  private func apply(_ batch: UpdateBatch<Section>) {
    batchCount += 1
    defer {
      version = batch.to
      let shown = showingWaiters.filter { SectionStore.same(sections, $0.sections) }
      showingWaiters.removeAll { SectionStore.same(sections, $0.sections) }
      for waiter in shown { waiter.continuation.resume() }
    }
    guard let view else {
      sections = batch.snapshot.sections
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
    case .animated(let style):
      performStages(batch, in: view, refreshing: style, animated: true)
    case .custom(let body):
      var applied = false
      body(
        ViewUpdate.Context(
          view: view, batch: batch,
          applyStages: { [unowned self] style, animated in
            precondition(!applied, "SimpleSource: a custom ViewUpdate applied a batch twice")
            applied = true
            self.performStages(batch, in: view, refreshing: style, animated: animated)
          },
          reload: { [unowned self] in
            precondition(!applied, "SimpleSource: a custom ViewUpdate applied a batch twice")
            applied = true
            self.reload(batch, in: view)
          }))
      precondition(applied, "SimpleSource: a custom ViewUpdate must apply each batch")
    }
  }

  private func performStages(_ batch: UpdateBatch<Section>, in view: View, refreshing style: RefreshStyle, animated: Bool) {
    for stage in batch.changeset.stages {
      view.performBatchUpdates(stage.batchUpdate(refreshing: style), animated: animated) {
        self.sections = stage.data
      }
    }
  }

  private func reload(_ batch: UpdateBatch<Section>, in view: View) {
    reloadCount += 1
    sections = batch.snapshot.sections
    view.reloadData()
  }
}
