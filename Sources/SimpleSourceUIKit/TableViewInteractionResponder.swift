// The table view delegate methods that interaction closures answer, reached by forwarding. Apple platforms only.

#if canImport(UIKit) && !os(watchOS) && !os(tvOS)
  import SimpleSourceCore
  import SimpleSourceViews
  import UIKit

  /// Answers the `UITableViewDelegate` (and editing `UITableViewDataSource`) methods of ``ListInteractions``.
  ///
  /// ``TableViewDataSource`` does not implement these methods itself: it forwards each one here when a
  /// closure handles it, and to its `fallbackDelegate` otherwise (``ViewDataSourceAdapter``). Every answer
  /// comes from the platform-free ``ListViewDataSource``; a row without a closure of its own gets UIKit's
  /// default (automatic heights, no swipe actions).
  @MainActor
  final class TableViewInteractionResponder<Section: SectionType>: NSObject, UITableViewDelegate,
    UITableViewDataSource
  {
    let viewDataSource: ListViewDataSource<Section, UITableView>

    init(viewDataSource: ListViewDataSource<Section, UITableView>) {
      self.viewDataSource = viewDataSource
    }

    // Required by UITableViewDataSource (for the editing methods' selectors); the adapter answers these
    // itself, so they are never forwarded here.
    func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
      viewDataSource.numberOfItems(inSection: section)
    }

    func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
      viewDataSource.cell(at: ItemPosition(indexPath), in: tableView)
    }

    // MARK: - Selection, display, accessory

    func tableView(_ tableView: UITableView, didSelectRowAt indexPath: IndexPath) {
      guard let position = ItemPosition(exactly: indexPath) else { return }
      if viewDataSource.didSelectItem(at: position) == .deselect {
        tableView.deselectRow(at: indexPath, animated: true)
      }
    }

    func tableView(_ tableView: UITableView, willDisplay cell: UITableViewCell, forRowAt indexPath: IndexPath)
    {
      guard let position = ItemPosition(exactly: indexPath) else { return }
      viewDataSource.willDisplayItem(at: position)
    }

    func tableView(_ tableView: UITableView, accessoryButtonTappedForRowWith indexPath: IndexPath) {
      guard let position = ItemPosition(exactly: indexPath) else { return }
      viewDataSource.accessoryTapped(at: position)
    }

    // MARK: - Heights

    func tableView(_ tableView: UITableView, heightForRowAt indexPath: IndexPath) -> CGFloat {
      Self.points(ItemPosition(exactly: indexPath).flatMap(viewDataSource.heightOfItem(at:)))
    }

    func tableView(_ tableView: UITableView, estimatedHeightForRowAt indexPath: IndexPath) -> CGFloat {
      Self.points(ItemPosition(exactly: indexPath).flatMap(viewDataSource.estimatedHeightOfItem(at:)))
    }

    func tableView(_ tableView: UITableView, heightForHeaderInSection section: Int) -> CGFloat {
      Self.points(viewDataSource.heightOfHeader(inSection: section))
    }

    func tableView(_ tableView: UITableView, heightForFooterInSection section: Int) -> CGFloat {
      Self.points(viewDataSource.heightOfFooter(inSection: section))
    }

    func tableView(_ tableView: UITableView, estimatedHeightForHeaderInSection section: Int) -> CGFloat {
      Self.points(viewDataSource.estimatedHeightOfHeader(inSection: section))
    }

    func tableView(_ tableView: UITableView, estimatedHeightForFooterInSection section: Int) -> CGFloat {
      Self.points(viewDataSource.estimatedHeightOfFooter(inSection: section))
    }

    private static func points(_ height: Double?) -> CGFloat {
      height.map { CGFloat($0) } ?? UITableView.automaticDimension
    }

    // MARK: - Editing

    func tableView(_ tableView: UITableView, canEditRowAt indexPath: IndexPath) -> Bool {
      ItemPosition(exactly: indexPath).map(viewDataSource.canEditItem(at:)) ?? false
    }

    func tableView(_ tableView: UITableView, editingStyleForRowAt indexPath: IndexPath)
      -> UITableViewCell.EditingStyle
    {
      switch ItemPosition(exactly: indexPath).flatMap(viewDataSource.editingAction(at:)) {
      case .delete: .delete
      case .insert: .insert
      case nil: .none
      }
    }

    func tableView(
      _ tableView: UITableView, commit editingStyle: UITableViewCell.EditingStyle,
      forRowAt indexPath: IndexPath
    ) {
      guard let position = ItemPosition(exactly: indexPath) else { return }
      switch editingStyle {
      case .delete: viewDataSource.commitEdit(.delete, at: position)
      case .insert: viewDataSource.commitEdit(.insert, at: position)
      default: break
      }
    }

    // MARK: - Swipe actions

    func tableView(_ tableView: UITableView, leadingSwipeActionsConfigurationForRowAt indexPath: IndexPath)
      -> UISwipeActionsConfiguration?
    {
      configuration(.leading, at: indexPath)
    }

    func tableView(_ tableView: UITableView, trailingSwipeActionsConfigurationForRowAt indexPath: IndexPath)
      -> UISwipeActionsConfiguration?
    {
      configuration(.trailing, at: indexPath)
    }

    /// The swipe actions of the row, as UIKit's contextual actions: each runs the platform-free action on
    /// the item the row shows now, and tells UIKit whether it was done when its task ends.
    private func configuration(_ edge: SwipeEdge, at indexPath: IndexPath) -> UISwipeActionsConfiguration? {
      guard let position = ItemPosition(exactly: indexPath),
        let actions = viewDataSource.swipeActions(edge, at: position)
      else { return nil }
      let item = viewDataSource.item(at: position)
      let contextual = actions.actions.map { action in
        let contextualAction = UIContextualAction(
          style: action.style == .destructive ? .destructive : .normal, title: action.title
        ) { [viewDataSource] _, _, completion in
          let task = viewDataSource.perform(action, on: item, at: position)
          Task.schedulable("answering UIKit") { @MainActor in completion(await task.value) }
        }
        if let name = action.systemImageName { contextualAction.image = UIImage(systemName: name) }
        return contextualAction
      }
      let configuration = UISwipeActionsConfiguration(actions: contextual)
      configuration.performsFirstActionWithFullSwipe = actions.performsFirstActionWithFullSwipe
      return configuration
    }
  }
#endif
