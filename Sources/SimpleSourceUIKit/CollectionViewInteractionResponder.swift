// The collection view delegate methods that interaction closures answer, reached by forwarding. Apple only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  import SimpleSourceCore
  import SimpleSourceViews
  import UIKit

  /// Answers the `UICollectionViewDelegate` methods of ``ListInteractions`` that collection views have
  /// (selection and display); ``CollectionViewDataSource`` forwards them here when a closure handles them,
  /// and to its `fallbackDelegate` otherwise.
  @MainActor
  final class CollectionViewInteractionResponder<Section: SectionType>: NSObject, UICollectionViewDelegate {
    let viewDataSource: ListViewDataSource<Section, UICollectionView>

    init(viewDataSource: ListViewDataSource<Section, UICollectionView>) {
      self.viewDataSource = viewDataSource
    }

    func collectionView(_ collectionView: UICollectionView, didSelectItemAt indexPath: IndexPath) {
      guard let position = ItemPosition(exactly: indexPath) else { return }
      if viewDataSource.didSelectItem(at: position) == .deselect {
        collectionView.deselectItem(at: indexPath, animated: true)
      }
    }

    func collectionView(
      _ collectionView: UICollectionView, willDisplay cell: UICollectionViewCell,
      forItemAt indexPath: IndexPath
    ) {
      guard let position = ItemPosition(exactly: indexPath) else { return }
      viewDataSource.willDisplayItem(at: position)
    }
  }
#endif
