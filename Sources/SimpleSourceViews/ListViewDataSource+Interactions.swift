// What the user does, resolved to the typed closures of ListInteractions for the item the view shows.

package import SimpleSourceCore

extension ListViewDataSource {
  /// The item at `position` and the closure at `key` for it, or `nil` when the position is not shown
  /// (a batch just removed it) or no closure handles it.
  private func closure<Closure>(
    _ key: KeyPath<ItemInteractions<Item>, Closure?>, at position: ItemPosition
  ) -> (Item, Closure)? {
    guard let view, isShown(position) else { return nil }
    let item = item(at: position)
    let reuseIdentifier = factory.reuseIdentifier(for: item, in: view)
    return interactions.closure(key, reuseIdentifier: reuseIdentifier).map { (item, $0) }
  }

  private func section(_ index: Int, _ closure: (@MainActor (Section, Int) -> Double)?) -> Double? {
    guard sections.indices.contains(index), let closure else { return nil }
    return closure(sections[index], index)
  }

  /// The user selected the item at `position`: runs its ``ItemInteractions/didSelect``.
  /// - Returns: What to do with the selection; `nil` when no closure ran (the view keeps the selection).
  /// - Complexity: O(1) plus the closure.
  @discardableResult
  package func didSelectItem(at position: ItemPosition) -> SelectionBehavior? {
    guard let (item, didSelect) = closure(\.didSelect, at: position) else { return nil }
    return didSelect(item, position)
  }

  /// The item at `position` is about to appear: runs its ``ItemInteractions/willDisplay``.
  package func willDisplayItem(at position: ItemPosition) {
    guard let (item, willDisplay) = closure(\.willDisplay, at: position) else { return }
    willDisplay(item, position)
  }

  /// The height of the item at `position`, or `nil` for the view's own (UIKit: automatic).
  package func heightOfItem(at position: ItemPosition) -> Double? {
    closure(\.height, at: position).map { $1($0, position) }
  }

  /// The estimated height of the item at `position`, or `nil` for the view's own.
  package func estimatedHeightOfItem(at position: ItemPosition) -> Double? {
    closure(\.estimatedHeight, at: position).map { $1($0, position) }
  }

  /// The height of a section's header, or `nil` for the view's own.
  package func heightOfHeader(inSection index: Int) -> Double? { section(index, interactions.headerHeight) }
  /// The height of a section's footer, or `nil` for the view's own.
  package func heightOfFooter(inSection index: Int) -> Double? { section(index, interactions.footerHeight) }
  /// The estimated height of a section's header, or `nil` for the view's own.
  package func estimatedHeightOfHeader(inSection index: Int) -> Double? {
    section(index, interactions.estimatedHeaderHeight)
  }
  /// The estimated height of a section's footer, or `nil` for the view's own.
  package func estimatedHeightOfFooter(inSection index: Int) -> Double? {
    section(index, interactions.estimatedFooterHeight)
  }

  /// Whether the item at `position` can be edited: its ``ItemInteractions/canEdit``; without one, whether
  /// it has a ``ItemInteractions/commitEdit`` or the user may move it (UIKit shows no reorder control on a
  /// row that cannot be edited).
  package func canEditItem(at position: ItemPosition) -> Bool {
    guard isShown(position) else { return false }
    if let (item, canEdit) = closure(\.canEdit, at: position) { return canEdit(item, position) }
    return closure(\.commitEdit, at: position) != nil || canMoveItem(at: position)
  }

  /// The edit the item at `position` offers: its ``ItemInteractions/editingAction``; without one,
  /// ``EditingAction/delete`` if it has a ``ItemInteractions/commitEdit``, else none (so enabling
  /// reordering does not make rows deletable).
  package func editingAction(at position: ItemPosition) -> EditingAction? {
    if let (item, editingAction) = closure(\.editingAction, at: position) {
      return editingAction(item, position)
    }
    return closure(\.commitEdit, at: position) != nil ? .delete : nil
  }

  /// The user committed `action` on the item at `position`: runs its ``ItemInteractions/commitEdit`` in a
  /// task. Its error reaches ``ListInteractions/interactionFailed``; the row is left as it was.
  /// - Returns: The task, to await in tests; `nil` when no closure runs.
  @discardableResult
  package func commitEdit(_ action: EditingAction, at position: ItemPosition) -> Task<Void, Never>? {
    guard let (item, commit) = closure(\.commitEdit, at: position) else { return nil }
    return Task.schedulable("committing an edit") { [weak self] in
      do {
        try await commit(action, item, position)
      } catch {
        self?.interactions.interactionFailed?(item, error)
      }
    }
  }

  /// The actions a swipe from `edge` reveals on the item at `position`, or `nil` for none.
  package func swipeActions(_ edge: SwipeEdge, at position: ItemPosition) -> SwipeActions<Item>? {
    let key = edge == .leading ? \ItemInteractions<Item>.leadingSwipeActions : \.trailingSwipeActions
    guard let (item, actions) = closure(key, at: position) else { return nil }
    return actions(item, position)
  }

  /// Performs a swipe action the user chose for `item`, shown at `position` when it was swiped.
  /// - Returns: A task that ends with whether the action was done (UIKit's completion); an error reaches
  ///   ``ListInteractions/interactionFailed`` and ends it with `false`.
  @discardableResult
  package func perform(_ action: SwipeAction<Item>, on item: Item, at position: ItemPosition) -> Task<
    Bool, Never
  > {
    Task.schedulable("a swipe action") { [weak self] in
      do {
        return try await action.handler(item, position)
      } catch {
        self?.interactions.interactionFailed?(item, error)
        return false
      }
    }
  }

  /// The user tapped the accessory button of the item at `position`.
  package func accessoryTapped(at position: ItemPosition) {
    guard let (item, tapped) = closure(\.accessoryTapped, at: position) else { return }
    tapped(item, position)
  }

  /// A cell of the item `itemID` sent `action`: runs the item's ``ItemInteractions/cellAction`` with the
  /// item and its current position, or nothing if the view no longer shows it.
  func cellDidSend(_ action: CellAction, itemID: Item.ID) {
    guard let position = position(ofShownItem: itemID),
      let (item, cellAction) = closure(\.cellAction, at: position)
    else { return }
    cellAction(action, item, position)
  }

  /// Whether `position` names an item the view shows.
  func isShown(_ position: ItemPosition) -> Bool {
    sections.indices.contains(position.section)
      && sections[position.section].items.indices.contains(position.item)
  }
}
