// TableViewDataSource: UITableViewDataSource answered by a ListViewDataSource. Apple platforms only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceCore
  public import SimpleSourceViews
  public import UIKit

  /// Makes and configures the cells, headers and footers of a table view, with typed closures.
  ///
  /// Generic over the section (not the item, as SimpleSource 1 was), so header and footer closures receive
  /// the section itself: the data source is an actor and cannot be read synchronously.
  public typealias TableViewFactory<Section: SectionType> = ViewFactory<Section, UITableView>

  /// The `UITableViewDataSource` of a table: never implement one again.
  ///
  /// ```swift
  /// let tableViewDataSource = TableViewDataSource(
  ///   dataSource: dataSource, viewFactory: viewFactory, viewUpdate: tableView.defaultViewUpdate())
  /// tableView.dataSource = tableViewDataSource
  /// tableView.delegate = tableViewDataSource   // for interaction closures and fallbackDelegate
  /// ```
  ///
  /// Every decision lives in ``viewDataSource`` (a ``ListViewDataSource``), which is tested on Linux; this
  /// class only forwards UIKit's questions to it. Keep a strong reference: the table holds its data source
  /// weakly.
  ///
  /// **Reordering.** Set ``reorderingDelegate`` (a `BasicDataSource` is one) and put the table in editing
  /// mode. Writes from other tasks are never lost; to hold them back while a row is dragged, call
  /// `viewDataSource.beginInteractiveMove()` when editing begins and `endInteractiveMove()` when it ends.
  ///
  /// **Custom headers and footers** are a `UITableViewDelegate` matter in UIKit: return
  /// ``headerView(inSection:of:)`` and ``footerView(inSection:of:)`` from your delegate's
  /// `tableView(_:viewForHeaderInSection:)` and `tableView(_:viewForFooterInSection:)`.
  @MainActor
  public final class TableViewDataSource<Section: SectionType>: ViewDataSourceAdapter<Section, UITableView>,
    UITableViewDataSource, UITableViewDelegate, HeaderFooterReconfiguring
  {
    /// Answers the delegate methods no interaction closure handles (and every `UIScrollViewDelegate`
    /// method); held weakly.
    /// - Complexity: O(1) to set; the table then asks again which methods its delegate answers.
    public var fallbackDelegate: (any UITableViewDelegate)? {
      get { fallbackDelegateObject as? any UITableViewDelegate }
      set {
        setFallback(newValue, as: .delegate)
      }
    }

    /// Answers the data source methods this class does not implement (section index titles, …); held
    /// weakly.
    /// - Complexity: O(1) to set; the table then asks again which methods its data source answers.
    public var fallbackDataSource: (any UITableViewDataSource)? {
      get { fallbackDataSourceObject as? any UITableViewDataSource }
      set {
        setFallback(newValue, as: .dataSource)
      }
    }

    override class func makeInteractionResponder(for viewDataSource: ListViewDataSource<Section, UITableView>)
      -> NSObject?
    {
      TableViewInteractionResponder(viewDataSource: viewDataSource)
    }

    override nonisolated class var interactionKind: ListInteractions<Section>.ViewKind { .table }

    override class func reassign(_ adapter: ViewDataSourceAdapter<Section, UITableView>, to view: UITableView)
    {
      // Assigning again makes UIKit ask anew which methods answer; it holds both weakly, as before.
      if view.delegate === adapter {
        view.delegate = nil
        view.delegate = adapter as? any UITableViewDelegate
      }
      if view.dataSource === adapter {
        view.dataSource = nil
        view.dataSource = adapter as? any UITableViewDataSource
      }
    }

    /// A custom header for your delegate's `tableView(_:viewForHeaderInSection:)`.
    /// - Complexity: O(1) plus the header's configuration closure.
    package func headerView(inSection section: Int, of tableView: UITableView) -> UITableViewHeaderFooterView?
    {
      viewDataSource.supplementaryView(
        ofKind: .header, at: ItemPosition(section: section, item: 0), in: tableView)
    }

    /// A custom footer for your delegate's `tableView(_:viewForFooterInSection:)`.
    /// - Complexity: O(1) plus the footer's configuration closure.
    package func footerView(inSection section: Int, of tableView: UITableView) -> UITableViewHeaderFooterView?
    {
      viewDataSource.supplementaryView(
        ofKind: .footer, at: ItemPosition(section: section, item: 0), in: tableView)
    }

    // MARK: - UITableViewDataSource

    /// The number of sections shown; the first question attaches the table view without reloading it.
    /// - Complexity: O(1).
    public func numberOfSections(in tableView: UITableView) -> Int {
      viewDataSource.attach(tableView, reloading: false)
      return viewDataSource.numberOfSections
    }

    /// The number of rows in `section` of the shown snapshot.
    /// - Complexity: O(1).
    public func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
      viewDataSource.numberOfItems(inSection: section)
    }

    /// The cell for the item at `indexPath`, made by the factory's registration for its reuse identifier.
    /// - Complexity: O(log *n*) to read the item from the shown snapshot, plus the cell's configuration
    ///   closure.
    public func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
      viewDataSource.cell(at: ItemPosition(indexPath), in: tableView)
    }

    /// The factory's header title for `section`.
    /// - Complexity: O(1) plus the title closure.
    public func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String? {
      viewDataSource.headerTitle(inSection: section)
    }

    /// The factory's footer title for `section`.
    /// - Complexity: O(1) plus the title closure.
    public func tableView(_ tableView: UITableView, titleForFooterInSection section: Int) -> String? {
      viewDataSource.footerTitle(inSection: section)
    }

    /// Whether the user may drag the row, from `canMoveItem` (no reordering delegate: `false`).
    /// - Complexity: O(log *n*) plus the `canMoveItem` closure.
    public func tableView(_ tableView: UITableView, canMoveRowAt indexPath: IndexPath) -> Bool {
      viewDataSource.canMoveItem(at: ItemPosition(indexPath))
    }

    /// Applies the user's move at once and sends it to the reordering delegate.
    /// - Complexity: O(*s*) for the *s* items of the sections the move touches (the move is recorded by ids),
    ///   plus the delegate's work, off the main actor.
    public func tableView(
      _ tableView: UITableView, moveRowAt sourceIndexPath: IndexPath, to destinationIndexPath: IndexPath
    ) {
      viewDataSource.moveItem(at: ItemPosition(sourceIndexPath), to: ItemPosition(destinationIndexPath))
    }

    // MARK: - Headers and footers configured again in place

    func reconfigureHeadersAndFooters(ofSections sections: [Int], in tableView: UITableView) {
      for index in sections where index < viewDataSource.numberOfSections {
        let section = viewDataSource.section(at: index)
        let position = ItemPosition(section: index, item: 0)
        if let header = tableView.headerView(forSection: index) {
          reconfigure(header, .header, title: viewDataSource.headerTitle(inSection: index), section, position)
        }
        if let footer = tableView.footerView(forSection: index) {
          reconfigure(footer, .footer, title: viewDataSource.footerTitle(inSection: index), section, position)
        }
      }
    }

    private func reconfigure(
      _ view: UITableViewHeaderFooterView, _ kind: SupplementaryKind, title: String?, _ section: Section,
      _ position: ItemPosition
    ) {
      if viewDataSource.factory.hasSupplementaryView(ofKind: kind) {
        viewDataSource.factory.configureSupplementaryView(view, ofKind: kind, for: section, at: position)
      } else {
        view.textLabel?.text = title
      }
      view.setNeedsLayout()
    }
  }
#endif
