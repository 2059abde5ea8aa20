// What TableViewDataSource and CollectionViewDataSource share: a ListViewDataSource that follows a source.

#if canImport(UIKit) && !os(watchOS)
  public import UIKit

  /// The common base of ``TableViewDataSource`` and ``CollectionViewDataSource``: it owns the platform-free
  /// ``viewDataSource`` and the task that makes it follow the data source.
  @MainActor
  open class ViewDataSourceAdapter<Section: SectionType, View: ListView>: NSObject {
    /// The platform-free data source that holds the view's copy of the data and applies every batch.
    public let viewDataSource: ListViewDataSource<Section, View>
    private var following: Task<Void, Never>?

    /// Creates the view's data source and starts following `dataSource`. The view is attached when it
    /// first asks a question, after you set it as the view's `dataSource`.
    /// - Parameters:
    ///   - dataSource: Where the items come from.
    ///   - viewFactory: Makes the cells, headers and footers (`TableViewFactory`, `CollectionViewFactory`).
    ///   - viewUpdate: How batches reach the view: `view.defaultViewUpdate()`, `view.unanimatedViewUpdate()`
    ///     or your own ``ViewUpdate/custom(largeBatchThreshold:_:)``.
    public init(
      dataSource: some DataSourceType<Section>, viewFactory: ViewFactory<Section, View>,
      viewUpdate: ViewUpdate<Section> = .animated()
    ) {
      let viewDataSource = ListViewDataSource(factory: viewFactory, update: viewUpdate)
      self.viewDataSource = viewDataSource
      super.init()
      following = Task { await viewDataSource.follow(dataSource) }
    }

    // A plain deinit, not `isolated deinit`: the latter crashes the compiler in optimised builds of a
    // generic @MainActor class for deployment targets below iOS 18.4 (swiftlang/swift #85308, #89896,
    // #90625), and would reject a subclass's own plain deinit. Reading a Sendable `Task` and cancelling it
    // needs no isolation.
    deinit { following?.cancel() }

    /// Applies the moves the user makes; `nil` (the default) disables reordering.
    public var reorderingDelegate: (any ReorderingDelegate<Section>)? {
      get { viewDataSource.reorderingDelegate }
      set { viewDataSource.reorderingDelegate = newValue }
    }
  }
#endif
