// The cells, headers and footers of ReferenceListViewHost: plain objects that tests subclass.

/// A cell, header or footer of a ``ReferenceListViewHost``. Subclass it with what your configuration
/// closures set, exactly as you would subclass `UITableViewCell`:
///
/// ```swift
/// final class NameCell: ReferenceReusableView {
///   var name = ""
/// }
/// factory.registerCell(method: .class, reuseIdentifier: "Name", in: host) { (cell: NameCell, item, _) in
///   cell.name = item.name
/// }
/// ```
@MainActor
open class ReferenceReusableView {
  /// The identifier it was dequeued with.
  public internal(set) var reuseIdentifier = ""
  /// How many times the host has handed it out (new, reused or reconfigured).
  package internal(set) var dequeueCount = 0
  /// Where it waits for reuse: cells and each kind of supplementary view have pools of their own.
  var reusePoolKey = ""

  /// Creates a view; the host calls this for a registered class.
  public required init() {}
}

/// How a ``ReferenceListViewHost`` makes a reusable view: by calling `init()` on the registered
/// subclass of ``ReferenceReusableView``.
public enum ReferenceReuseMethod: Sendable {
  /// Makes an instance of the class the configuration closure takes.
  case `class`
}
