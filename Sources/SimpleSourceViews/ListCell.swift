// Cells that update themselves, in the spirit of AEViewModel's Cell: configure once, reset, update, send actions.

/// Something the user did inside a cell: a switch flipped, a slider moved, text edited, a button tapped.
public enum CellAction: Sendable, Hashable {
  /// A switch was set to `isOn`.
  case toggled(Bool)
  /// A slider was moved to `value`.
  case slid(Double)
  /// The text of a field or text view became `text`.
  case textChanged(String)
  /// The cell's button was tapped.
  case tapped
  /// An action of the cell's own, by name.
  case custom(String)
}

/// What a ``ListCell`` knows of the item it shows, kept up to date by its ``ViewFactory``: the item's id,
/// and where its actions go.
@MainActor
public final class CellContext {
  /// The id of the item the cell shows.
  public internal(set) var itemID: AnyHashable
  var sendAction: (@MainActor (CellAction) -> Void)?

  init(itemID: AnyHashable) { self.itemID = itemID }

  /// Sends `action` to the view data source, which hands it to the item's
  /// ``ItemInteractions/cellAction`` closure with the item and its current position. Does nothing when
  /// the cell shows no item any more, or is not in a followed view.
  public func send(_ action: CellAction) { sendAction?(action) }
}

/// A cell that shows one kind of model and reports what the user does with it: AEViewModel's `Cell`
/// protocol, platform-free. The built-in UIKit cells (`TableCells`, `CollectionCells`) are ones, and
/// so can your own cells and the reference cells of tests.
///
/// Register it with ``ViewFactory/registerCell(_:method:reuseIdentifier:in:model:)``; the factory then:
/// - calls ``configure()`` once, the first time the cell is dequeued;
/// - calls ``reset()`` when the cell is reused for another item;
/// - calls ``update(with:)`` every time it shows an item (new, reused, reloaded or reconfigured);
/// - keeps ``cellContext`` pointing at the item, so ``send(_:)`` reaches the handler with the item's id
///   and current position, wherever batches have moved it since.
///
/// ```swift
/// final class ToggleCell: UITableViewCell, ListCell {
///   var cellContext: CellContext?
///   let toggle = UISwitch()
///   func update(with model: FormContent) { toggle.isOn = model.isOn ?? false }
///   @objc func switched() { send(.toggled(toggle.isOn)) }
/// }
/// ```
@MainActor
public protocol ListCell: AnyObject {
  /// What the cell shows: the item itself, or a view model made of it.
  associatedtype Model

  /// Kept by the factory; declare it as a stored `var cellContext: CellContext?` and leave it alone.
  var cellContext: CellContext? { get set }

  /// Sets the cell up, once: subviews, targets, layout.
  func configure()
  /// Clears what the previous item left, before the cell shows another.
  func reset()
  /// Shows `model`.
  func update(with model: Model)
}

extension ListCell {
  /// Does nothing.
  public func configure() {}
  /// Does nothing.
  public func reset() {}
  /// Sends an action the user made in this cell (see ``CellContext/send(_:)``).
  public func send(_ action: CellAction) { cellContext?.send(action) }
}

/// Where a view data source receives the actions of the cells it dequeues: the item's id and the action.
public typealias CellActionSink<ItemID> = @MainActor (_ itemID: ItemID, _ action: CellAction) -> Void
