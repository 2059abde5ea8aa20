// A ListView for tests: a ReferenceListView that reads its data source as UIKit would, and records errors.

public import SimpleSource

/// A ``ListView`` backed by a ``ReferenceListView``: every batch a view data source performs is checked
/// against UIKit's rules, and the result against the data source's sections.
///
/// Set ``dataSource`` to read the sections the view's data source holds, as UIKit asks its data source:
///
/// ```swift
/// let host = ReferenceListViewHost<MySection>()
/// let dataSource = ListViewDataSource(view: host)
/// host.dataSource = { [unowned dataSource] in dataSource.sections }
/// ```
@MainActor
public final class ReferenceListViewHost<Section: SectionType>: ListView {
  /// The simulated view.
  public private(set) var reference = ReferenceListView<Section>()
  /// Reads the sections the data source holds now.
  public var dataSource: @MainActor () -> [Section] = { [] }
  /// Whether the view is in a window; set `false` to test the off-screen fallback.
  public var isOnScreen = true
  /// Every batch UIKit would have rejected. The view is reloaded after each, as a real app would crash.
  public private(set) var errors: [ListViewError] = []
  /// How many times `reloadData()` was called.
  public private(set) var reloadCount = 0
  /// How many batches were performed, and how many of them animated.
  public private(set) var batchCount = 0
  /// How many of the batches were animated.
  public private(set) var animatedBatchCount = 0

  /// Creates an empty host.
  public init() {}

  /// Reads the data source again, with new cells.
  public func reloadData() {
    reloadCount += 1
    reference.reloadData(dataSource())
  }

  /// Swaps the data inside the batch, then checks the batch against UIKit's rules.
  public func performBatchUpdates(_ update: BatchUpdate, animated: Bool, updateData: () -> Void) {
    batchCount += 1
    if animated { animatedBatchCount += 1 }
    updateData()
    let data = dataSource()
    do {
      try reference.performBatchUpdates(update, data: data)
    } catch {
      errors.append(error)
      reference.reloadData(data)
    }
  }
}
