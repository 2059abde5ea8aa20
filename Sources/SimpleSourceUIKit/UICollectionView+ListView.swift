// UICollectionView as a ListView: registration, dequeue and batch updates, forwarded to UIKit. Apple platforms only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  public import SimpleSourceCore
  public import SimpleSourceViews
  public import UIKit

  /// How a collection view makes a cell or supplementary view for a reuse identifier.
  public enum CollectionViewReuseMethod {
    /// Registers the class the configuration closure takes.
    case `class`
    /// Registers a nib whose top-level object is the view.
    case nib(UINib)
    /// A prototype in the storyboard; there is nothing to register.
    case storyboard
  }

  extension UICollectionView: ListView {
    /// Collection view cells.
    public typealias Cell = UICollectionViewCell
    /// Headers, footers and the layout's own kinds.
    public typealias SupplementaryView = UICollectionReusableView
    /// Class, nib or storyboard prototype.
    public typealias ReuseMethod = CollectionViewReuseMethod

    /// Whether the collection view is in a window.
    /// - Complexity: O(1).
    public var isOnScreen: Bool { window != nil }

    /// Performs one stage: swaps the data first thing inside the update block (S5), makes UIKit's calls,
    /// then configures the visible headers and footers of ``StageCalls/reconfigureSections`` again in
    /// place. Animations come from the layout; `animated: false` turns them off.
    /// - Complexity: O(*k*) for the stage's *k* calls, plus UIKit's own work.
    public func performBatchUpdates(
      _ update: StageCalls, animated: Bool, updateData: @escaping @MainActor () -> Void
    ) {
      let perform = { [self] in
        performBatchUpdates(
          { [self] in
            updateData()
            deleteSections(IndexSet(update.deleteSections))
            insertSections(IndexSet(update.insertSections))
            reloadSections(IndexSet(update.reloadSections))
            for move in update.moveSections { moveSection(move.from, toSection: move.to) }
            deleteItems(at: update.deleteItems.map(\.indexPath))
            insertItems(at: update.insertItems.map(\.indexPath))
            reloadItems(at: update.reloadItems.map(\.indexPath))
            for move in update.moveItems { moveItem(at: move.from.indexPath, to: move.to.indexPath) }
            if !update.reconfigureItems.isEmpty {
              reconfigureItems(at: update.reconfigureItems.map(\.indexPath))
            }
          }, completion: nil)
      }
      if animated { perform() } else { UIView.performWithoutAnimation(perform) }
      if !update.reconfigureSections.isEmpty, let owner = dataSource as? any SupplementaryReconfiguring {
        owner.reconfigureSupplementaryViews(ofSections: update.reconfigureSections, in: self)
      }
    }

    /// Registers a cell class or nib; storyboard prototypes need nothing.
    /// - Complexity: O(1).
    public func registerCell(
      _ method: CollectionViewReuseMethod, cellClass: AnyClass, reuseIdentifier: String
    ) {
      switch method {
      case .class: register(cellClass, forCellWithReuseIdentifier: reuseIdentifier)
      case .nib(let nib): register(nib, forCellWithReuseIdentifier: reuseIdentifier)
      case .storyboard: break
      }
    }

    /// Dequeues a cell for `reuseIdentifier`.
    /// - Complexity: O(1), plus UIKit's dequeue.
    public func dequeueCell(
      _ method: CollectionViewReuseMethod, reuseIdentifier: String, at position: ItemPosition
    )
      -> UICollectionViewCell
    {
      dequeueReusableCell(withReuseIdentifier: reuseIdentifier, for: position.indexPath)
    }

    /// Registers a supplementary view class or nib for `kind`.
    /// - Complexity: O(1).
    public func registerSupplementaryView(
      _ method: CollectionViewReuseMethod, viewClass: AnyClass, kind: SupplementaryKind,
      reuseIdentifier: String
    ) {
      switch method {
      case .class:
        register(viewClass, forSupplementaryViewOfKind: kind.rawValue, withReuseIdentifier: reuseIdentifier)
      case .nib(let nib):
        register(nib, forSupplementaryViewOfKind: kind.rawValue, withReuseIdentifier: reuseIdentifier)
      case .storyboard: break
      }
    }

    /// Dequeues a supplementary view of `kind`.
    /// - Complexity: O(1), plus UIKit's dequeue.
    public func dequeueSupplementaryView(
      _ method: CollectionViewReuseMethod, kind: SupplementaryKind, reuseIdentifier: String,
      at position: ItemPosition
    ) -> UICollectionReusableView {
      dequeueReusableSupplementaryView(
        ofKind: kind.rawValue, withReuseIdentifier: reuseIdentifier, for: position.indexPath)
    }

    /// Each stage as one batch, animated by the layout; changed items reconfigured in place (reloaded when
    /// their cell class changes). Falls back to `reloadData()` off screen and above `largeBatchThreshold`.
    /// - Complexity: O(1).
    public func defaultViewUpdate<Section: SectionType>(largeBatchThreshold: Int? = 500) -> ViewUpdate<
      Section
    > {
      .animated(refreshing: .reconfigure, largeBatchThreshold: largeBatchThreshold)
    }

    /// Every batch with `reloadData()`.
    /// - Complexity: O(1).
    public func unanimatedViewUpdate<Section: SectionType>() -> ViewUpdate<Section> { .unanimated }
  }

  /// A collection view's data source that can configure visible supplementary views again in place.
  @MainActor
  protocol SupplementaryReconfiguring: AnyObject {
    func reconfigureSupplementaryViews(ofSections sections: [Int], in collectionView: UICollectionView)
  }
#endif
