// CollectionViewDataSource: UICollectionViewDataSource answered by a ListViewDataSource. Apple platforms only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceCore
  public import SimpleSourceViews
  public import UIKit

  /// Makes and configures the cells and supplementary views of a collection view, with typed closures.
  public typealias CollectionViewFactory<Section: SectionType> = ViewFactory<Section, UICollectionView>

  /// The `UICollectionViewDataSource` of a collection view: never implement one again.
  ///
  /// ```swift
  /// let collectionViewDataSource = CollectionViewDataSource(
  ///   dataSource: dataSource, viewFactory: viewFactory, viewUpdate: collectionView.defaultViewUpdate())
  /// collectionView.dataSource = collectionViewDataSource
  /// collectionViewDataSource.reorderingDelegate = dataSource   // drag-and-drop reordering, one line
  /// ```
  ///
  /// Every decision lives in ``viewDataSource`` (a ``ListViewDataSource``), which is tested on Linux; this
  /// class only forwards UIKit's questions to it. Keep a strong reference: the collection view holds its
  /// data source weakly.
  ///
  /// **Reordering.** With `installsStandardGestureForInteractiveMovement`, setting ``reorderingDelegate``
  /// is all it takes: the user's move is applied at once, never moved again by its echo, and writes from
  /// other tasks are never lost. If you drive the movement yourself, call this class's
  /// ``beginInteractiveMovementForItem(at:in:)``, ``endInteractiveMovement(in:)`` and
  /// ``cancelInteractiveMovement(in:)`` instead of the collection view's: batches are then also held back
  /// while the finger is down, and applied at the drop.
  @MainActor
  public final class CollectionViewDataSource<Section: SectionType>: ViewDataSourceAdapter<
    Section, UICollectionView
  >,
  UICollectionViewDataSource,
  UICollectionViewDelegate,
  SupplementaryReconfiguring
  {
    private var isMoving = false

    /// Answers the delegate methods no interaction closure handles (layout delegate methods, every
    /// `UIScrollViewDelegate` method, …); held weakly.
    /// - Complexity: O(1) to set; the collection then asks again which methods its delegate answers.
    public var fallbackDelegate: (any UICollectionViewDelegate)? {
      get { fallbackDelegateObject as? any UICollectionViewDelegate }
      set {
        setFallback(newValue, as: .delegate)
      }
    }

    /// Answers the data source methods this class does not implement (index titles, …); held weakly.
    /// - Complexity: O(1) to set; the collection then asks again which methods its data source answers.
    public var fallbackDataSource: (any UICollectionViewDataSource)? {
      get { fallbackDataSourceObject as? any UICollectionViewDataSource }
      set {
        setFallback(newValue, as: .dataSource)
      }
    }

    override class func makeInteractionResponder(
      for viewDataSource: ListViewDataSource<Section, UICollectionView>
    ) -> NSObject? {
      CollectionViewInteractionResponder(viewDataSource: viewDataSource)
    }

    override nonisolated class var interactionKind: ListInteractions<Section>.ViewKind { .collection }

    override class func reassign(
      _ adapter: ViewDataSourceAdapter<Section, UICollectionView>, to view: UICollectionView
    ) {
      // Assigning again makes UIKit ask anew which methods answer; it holds both weakly, as before.
      if view.delegate === adapter {
        view.delegate = nil
        view.delegate = adapter as? any UICollectionViewDelegate
      }
      if view.dataSource === adapter {
        view.dataSource = nil
        view.dataSource = adapter as? any UICollectionViewDataSource
      }
    }

    // MARK: - Interactive movement that holds batches back

    /// Begins moving the item at `indexPath`, and holds batches back until the movement ends.
    /// - Complexity: O(1), plus UIKit's own work.
    @discardableResult
    public func beginInteractiveMovementForItem(at indexPath: IndexPath, in collectionView: UICollectionView)
      -> Bool
    {
      guard collectionView.beginInteractiveMovementForItem(at: indexPath) else { return false }
      isMoving = true
      viewDataSource.beginInteractiveMove()
      return true
    }

    /// Drops the item; UIKit reports the move, then the held batches are applied.
    /// - Complexity: O(1) plus the batches held back meanwhile, and UIKit's own work.
    public func endInteractiveMovement(in collectionView: UICollectionView) {
      collectionView.endInteractiveMovement()
      endHold()
    }

    /// Cancels the movement; the held batches are applied.
    /// - Complexity: O(1) plus the batches held back meanwhile, and UIKit's own work.
    public func cancelInteractiveMovement(in collectionView: UICollectionView) {
      collectionView.cancelInteractiveMovement()
      endHold()
    }

    private func endHold() {
      guard isMoving else { return }
      isMoving = false
      viewDataSource.endInteractiveMove()
    }

    // MARK: - UICollectionViewDataSource

    /// The number of sections shown; the first question attaches the collection view without reloading it.
    /// - Complexity: O(1).
    public func numberOfSections(in collectionView: UICollectionView) -> Int {
      viewDataSource.attach(collectionView, reloading: false)
      return viewDataSource.numberOfSections
    }

    /// The number of items in `section` of the shown snapshot.
    /// - Complexity: O(1).
    public func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int
    {
      viewDataSource.numberOfItems(inSection: section)
    }

    /// The cell for the item at `indexPath`, made by the factory's registration for its reuse identifier.
    /// - Complexity: O(log *n*) to read the item from the shown snapshot, plus the cell's configuration
    ///   closure.
    public func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath)
      -> UICollectionViewCell
    {
      viewDataSource.cell(at: ItemPosition(indexPath), in: collectionView)
    }

    /// The header, footer or other supplementary view the factory registered for `kind`.
    /// - Complexity: O(1) plus the view's configuration closure.
    public func collectionView(
      _ collectionView: UICollectionView, viewForSupplementaryElementOfKind kind: String,
      at indexPath: IndexPath
    ) -> UICollectionReusableView {
      guard
        let view = viewDataSource.supplementaryView(
          ofKind: SupplementaryKind(rawValue: kind), at: indexPath, in: collectionView)
      else {
        preconditionFailure(
          "SimpleSource: the layout asks for a '\(kind)' view at \(indexPath), but the factory registers none"
            + " there (no such view registered, or no section \(indexPath.first ?? -1) shown)")
      }
      return view
    }

    /// Whether the user may drag the item, from `canMoveItem` (no reordering delegate: `false`).
    /// - Complexity: O(log *n*) plus the `canMoveItem` closure.
    public func collectionView(_ collectionView: UICollectionView, canMoveItemAt indexPath: IndexPath) -> Bool
    {
      viewDataSource.canMoveItem(at: ItemPosition(indexPath))
    }

    /// Applies the user's move at once and sends it to the reordering delegate.
    /// - Complexity: O(*s*) for the *s* items of the sections the move touches (the move is recorded by ids),
    ///   plus the delegate's work, off the main actor.
    public func collectionView(
      _ collectionView: UICollectionView, moveItemAt sourceIndexPath: IndexPath,
      to destinationIndexPath: IndexPath
    ) {
      viewDataSource.moveItem(at: ItemPosition(sourceIndexPath), to: ItemPosition(destinationIndexPath))
    }

    // MARK: - Supplementary views configured again in place

    func reconfigureSupplementaryViews(ofSections sections: [Int], in collectionView: UICollectionView) {
      for index in sections where index < viewDataSource.numberOfSections {
        let section = viewDataSource.section(at: index)
        let position = ItemPosition(section: index, item: 0)
        for kind in [SupplementaryKind.header, .footer] {
          guard
            let view = collectionView.supplementaryView(forElementKind: kind.rawValue, at: position.indexPath)
          else { continue }
          viewDataSource.factory.configureSupplementaryView(view, ofKind: kind, for: section, at: position)
        }
      }
    }
  }
#endif
