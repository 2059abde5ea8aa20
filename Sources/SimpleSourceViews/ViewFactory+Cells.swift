// Registering cells that update themselves (ListCell): configure once, reset on reuse, update, actions.

import Foundation

extension ViewFactory {
  /// Teaches `view` to make `cellType` cells for `reuseIdentifier`, which show `model(item)` and send
  /// their actions to the view data source (see ``ListCell`` for what is called when).
  ///
  /// - Parameters:
  ///   - cellType: The cell class, a ``ListCell``: the view makes instances of this very class (a
  ///     subclass passed as a value of a base metatype included).
  ///   - method: How the view makes the cell.
  ///   - reuseIdentifier: The identifier the factory's closure returns for the items this cell shows.
  ///   - view: The view to register in.
  ///   - model: Makes what the cell shows from the item.
  /// - Complexity: Each dequeue is O(1) plus the cell's own work.
  public func registerCell<Cell: ListCell>(
    _ cellType: Cell.Type, method: View.ReuseMethod, reuseIdentifier: String, in view: View,
    model: @escaping @MainActor (Item) -> Cell.Model
  ) {
    let naming = "reuse identifier '\(reuseIdentifier)'"
    let configure: @MainActor (View.Cell, Item, IndexPath, CellActionSink<Item.ID>?) -> Void = {
      base, item, _, actions in
      guard let cell = base as? Cell else {
        preconditionFailure(
          "SimpleSource: the view dequeued a \(type(of: base)) for \(naming), but it is registered as \(Cell.self)"
        )
      }
      Self.prepare(cell, for: item, actions: actions)
      cell.update(with: model(item))
    }
    register(method, cellClass: cellType, reuseIdentifier: reuseIdentifier, in: view, configure: configure)
  }

  /// Configures a new cell once, resets a reused one that showed another item, and points its context at
  /// `item`.
  private static func prepare<Cell: ListCell>(
    _ cell: Cell, for item: Item, actions: CellActionSink<Item.ID>?
  ) {
    let id = AnyHashable(item.id)
    let context: CellContext
    if let existing = cell.cellContext {
      context = existing
      if existing.itemID != id { cell.reset() }
      context.itemID = id
    } else {
      context = CellContext(itemID: id)
      cell.cellContext = context
      cell.configure()
    }
    let itemID = item.id
    if let actions {
      context.sendAction = { action in actions(itemID, action) }
    } else {
      context.sendAction = nil
    }
  }

  /// Teaches `view` to make `cellType` cells that show the item itself.
  public func registerCell<Cell: ListCell>(
    _ cellType: Cell.Type, method: View.ReuseMethod, reuseIdentifier: String, in view: View
  ) where Cell.Model == Item {
    registerCell(cellType, method: method, reuseIdentifier: reuseIdentifier, in: view) { $0 }
  }
}
