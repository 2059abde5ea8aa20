// Swipe actions of ListInteractions for the rows of an ObservedList: what the SwiftUI skin shows on a row
// and runs when the user picks an action, resolved by row id so that a row's view depends on its own item.

public import SimpleSourceCore

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension ObservedList {
  /// Where the source's newest state has row `id`, read without observing anything. While an edit from the
  /// list is pending (``move(fromOffsets:toOffset:inSection:using:)``), the row may show elsewhere.
  /// - Complexity: O(log *n*).
  public func sourcePosition(ofRow id: Item.ID) -> ItemPosition? { newest.position(ofItem: id) }

  /// The actions a swipe from `edge` reveals on row `id`: the ``ItemInteractions/leadingSwipeActions`` or
  /// ``ItemInteractions/trailingSwipeActions`` of `interactions` for `reuseIdentifier` (else its
  /// ``ListInteractions/all``), asked with the item the row shows and ``sourcePosition(ofRow:)``.
  ///
  /// Called from a row's view, this observes that row's item only: the actions are asked again when the
  /// row's item changes, not when rows are inserted, deleted or moved around it.
  /// - Returns: `nil` when the model shows no row `id`, or no closure gives actions.
  /// - Complexity: O(log *n*), plus the closure.
  public func swipeActions(
    _ edge: SwipeEdge, forRow id: Item.ID, in interactions: ListInteractions<Section>,
    reuseIdentifier: String = ""
  ) -> SwipeActions<Item>? {
    let key = edge == .leading ? \ItemInteractions<Item>.leadingSwipeActions : \.trailingSwipeActions
    guard let row = rowsByID[id], let position = sourcePosition(ofRow: id),
      let actions = interactions.closure(key, reuseIdentifier: reuseIdentifier)
    else { return nil }
    return actions(row.item, position)
  }

  /// Performs `action`, which the user picked on row `id`, with the item the row shows now and its
  /// position: a thrown error reaches ``ListInteractions/interactionFailed`` and counts as not done.
  /// - Returns: A task that ends with whether the action was done; `nil`, running nothing, when the model
  ///   no longer shows row `id` (a batch removed it while its actions were on screen).
  /// - Complexity: O(log *n*), plus the handler.
  @discardableResult
  public func perform(
    _ action: SwipeAction<Item>, onRow id: Item.ID, in interactions: ListInteractions<Section>
  ) -> Task<Bool, Never>? {
    guard let row = rowsByID[id], let position = sourcePosition(ofRow: id) else { return nil }
    let item = row.item
    return Task.schedulable("an interaction") { [weak interactions] in
      do {
        return try await action.handler(item, position)
      } catch {
        interactions?.interactionFailed?(item, error)
        return false
      }
    }
  }
}
