// Typed registrations of cells, headers and footers by reuse identifier, and the dequeue that uses them.

public import SimpleSourceCore
public import Foundation

/// Makes and configures the cells, headers and footers of one kind of ``ListView``, with typed closures.
///
/// A factory is created with a closure that picks a reuse identifier for an item. For each identifier
/// you register how the view makes the cell (``ListView/ReuseMethod``) and a configuration closure that
/// receives the cell as its own class, the item and its index path — no casts at the call site:
///
/// ```swift
/// let factory = TableViewFactory<Department> { employee, tableView in "Employee" }
/// factory.registerCell(method: .style(.subtitle), reuseIdentifier: "Employee", in: tableView) {
///   (cell: UITableViewCell, employee: Employee, indexPath: IndexPath) in
///   cell.textLabel?.text = employee.name
/// }
/// factory.registerHeaderText { department, index in department.name }
/// ```
///
/// Several cell types and several item types read the same way: wrap the item types in an `enum`, pick
/// the identifier from its case, and register one closure per cell class:
///
/// ```swift
/// enum Preference: Identifiable, Equatable, Sendable {
///   case toggle(id: String, title: String, isOn: Bool)
///   case choice(id: String, title: String, value: String)
///   var id: String { … }
/// }
/// let factory = ViewFactory<Section<String, Preference>, UITableView> { preference, _ in
///   switch preference {
///   case .toggle: "Toggle"
///   case .choice: "Choice"
///   }
/// }
/// factory.registerCell(method: .class, reuseIdentifier: "Toggle", in: tableView) {
///   (cell: SwitchCell, preference: Preference, _) in
///   if case .toggle(_, let title, let isOn) = preference { cell.configure(title: title, isOn: isOn) }
/// }
/// ```
///
/// - Important: A configuration closure's cell class must be the class the view makes for its
///   identifier (or one of its superclasses). A mismatch is a programming error and stops with a message
///   naming the identifier and both classes, as UIKit's own dequeue does.
///
/// The factory keeps its closures; capture what they need weakly if it retains the factory.
@MainActor
public final class ViewFactory<Section: SectionType, View: ListView> {
  /// The item type.
  public typealias Item = Section.Item

  struct CellRegistration {
    let method: View.ReuseMethod
    let cellClass: AnyClass
    let configure: @MainActor (View.Cell, Item, IndexPath, CellActionSink<Item.ID>?) -> Void
  }

  struct SupplementaryRegistration {
    let method: View.ReuseMethod
    let viewClass: AnyClass
    let reuseIdentifier: String
    let configure: @MainActor (View.SupplementaryView, Section, IndexPath) -> Void
  }

  private let reuseIdentifierForItem: @MainActor (Item, View) -> String
  private var cells: [String: CellRegistration] = [:]
  private var supplementaryViews: [SupplementaryKind: SupplementaryRegistration] = [:]
  private var headerText: (@MainActor (Section, Int) -> String?)?
  private var footerText: (@MainActor (Section, Int) -> String?)?

  /// Creates a factory that asks `reuseIdentifier` which kind of cell shows an item.
  /// - Parameter reuseIdentifier: Called each time a cell is about to be dequeued, with the item and the
  ///   view; returns the reuse identifier of a registered cell.
  public init(reuseIdentifier: @escaping @MainActor (_ item: Item, _ view: View) -> String) {
    reuseIdentifierForItem = reuseIdentifier
  }

  // MARK: - Registering

  /// Teaches `view` to make cells for `reuseIdentifier`, and the factory how to configure them.
  ///
  /// - Parameters:
  ///   - method: How the view makes the cell: its class, a nib, a storyboard prototype or a built-in style.
  ///   - reuseIdentifier: The identifier the factory's closure returns for the items this cell shows.
  ///   - view: The view to register in. Call ``register(in:)`` to use the factory with further views.
  ///   - configuration: Configures a dequeued cell, typed as its own class, for an item and its index path.
  ///     Called for new cells, reloads and reconfigures.
  public func registerCell<Cell: AnyObject>(
    method: View.ReuseMethod, reuseIdentifier: String, in view: View,
    configuration: @escaping @MainActor (_ cell: Cell, _ item: Item, _ indexPath: IndexPath) -> Void
  ) {
    let configure: @MainActor (View.Cell, Item, IndexPath) -> Void = Self.casting(
      configuration, naming: "reuse identifier '\(reuseIdentifier)'")
    register(method, cellClass: Cell.self, reuseIdentifier: reuseIdentifier, in: view) {
      cell, item, indexPath, _ in
      configure(cell, item, indexPath)
    }
  }

  /// Records a cell registration and teaches `view` to make its cells.
  func register(
    _ method: View.ReuseMethod, cellClass: AnyClass, reuseIdentifier: String, in view: View,
    configure: @escaping @MainActor (View.Cell, Item, IndexPath, CellActionSink<Item.ID>?) -> Void
  ) {
    cells[reuseIdentifier] = CellRegistration(method: method, cellClass: cellClass, configure: configure)
    view.registerCell(method, cellClass: cellClass, reuseIdentifier: reuseIdentifier)
  }

  /// Teaches `view` to make supplementary views of `kind`, and the factory how to configure them.
  ///
  /// - Parameters:
  ///   - method: How the view makes the supplementary view.
  ///   - kind: ``SupplementaryKind/header``, ``SupplementaryKind/footer`` or a kind of the layout's own.
  ///   - reuseIdentifier: The identifier to register under.
  ///   - view: The view to register in.
  ///   - configuration: Configures a dequeued view, typed as its own class, for a section and the index
  ///     path of the supplementary view (`[section, 0]` for headers and footers).
  public func registerSupplementaryView<Supplementary: AnyObject>(
    method: View.ReuseMethod, kind: SupplementaryKind, reuseIdentifier: String, in view: View,
    configuration:
      @escaping @MainActor (_ view: Supplementary, _ section: Section, _ indexPath: IndexPath) -> Void
  ) {
    supplementaryViews[kind] = SupplementaryRegistration(
      method: method, viewClass: Supplementary.self, reuseIdentifier: reuseIdentifier,
      configure: Self.casting(configuration, naming: "\(kind) '\(reuseIdentifier)'"))
    view.registerSupplementaryView(
      method, viewClass: Supplementary.self, kind: kind, reuseIdentifier: reuseIdentifier)
  }

  /// Wraps a typed configuration closure in one that takes the view's base class, hiding the cast.
  private static func casting<Base, Typed, Content>(
    _ configuration: @escaping @MainActor (Typed, Content, IndexPath) -> Void, naming registration: String
  ) -> @MainActor (Base, Content, IndexPath) -> Void {
    { view, content, indexPath in
      guard let typed = view as? Typed else {
        preconditionFailure(
          "SimpleSource: the view dequeued a \(type(of: view)) for \(registration), "
            + "but its configuration closure takes a \(Typed.self)")
      }
      configuration(typed, content, indexPath)
    }
  }

  /// Registers a custom header view; see ``registerSupplementaryView(method:kind:reuseIdentifier:in:configuration:)``.
  public func registerHeaderView<Header: AnyObject>(
    method: View.ReuseMethod, reuseIdentifier: String, in view: View,
    configuration: @escaping @MainActor (_ header: Header, _ section: Section, _ indexPath: IndexPath) -> Void
  ) {
    registerSupplementaryView(
      method: method, kind: .header, reuseIdentifier: reuseIdentifier, in: view, configuration: configuration)
  }

  /// Registers a custom footer view; see ``registerSupplementaryView(method:kind:reuseIdentifier:in:configuration:)``.
  public func registerFooterView<Footer: AnyObject>(
    method: View.ReuseMethod, reuseIdentifier: String, in view: View,
    configuration: @escaping @MainActor (_ footer: Footer, _ section: Section, _ indexPath: IndexPath) -> Void
  ) {
    registerSupplementaryView(
      method: method, kind: .footer, reuseIdentifier: reuseIdentifier, in: view, configuration: configuration)
  }

  /// Gives every section a text header: the title `title` returns, or none for `nil`.
  ///
  /// The closure receives the section as the view shows it (the view data source's own copy) and its index,
  /// so it never reads the data source, which is an actor.
  public func registerHeaderText(_ title: @escaping @MainActor (_ section: Section, _ index: Int) -> String?)
  {
    headerText = title
  }

  /// Gives every section a text footer: the title `title` returns, or none for `nil`.
  public func registerFooterText(_ title: @escaping @MainActor (_ section: Section, _ index: Int) -> String?)
  {
    footerText = title
  }

  /// Registers every cell and supplementary view of this factory in another view, so one factory serves
  /// several views of the same kind.
  public func register(in view: View) {
    for (reuseIdentifier, registration) in cells {
      view.registerCell(
        registration.method, cellClass: registration.cellClass, reuseIdentifier: reuseIdentifier)
    }
    for (kind, registration) in supplementaryViews {
      view.registerSupplementaryView(
        registration.method, viewClass: registration.viewClass, kind: kind,
        reuseIdentifier: registration.reuseIdentifier)
    }
  }

  // MARK: - Dequeuing

  /// The reuse identifier of the cell that shows `item`.
  package func reuseIdentifier(for item: Item, in view: View) -> String {
    reuseIdentifierForItem(item, view)
  }

  /// Dequeues the cell for `item` at `position` and configures it.
  ///
  /// - Parameters:
  ///   - item: The item to show.
  ///   - position: Where the view shows it.
  ///   - view: The view to dequeue from.
  ///   - actions: Where the actions of a ``ListCell`` go (``ListViewDataSource`` passes its own).
  /// - Precondition: The identifier the factory's closure returns for `item` is registered.
  package func cell(
    for item: Item, at position: ItemPosition, in view: View, actions: CellActionSink<Item.ID>? = nil
  ) -> View.Cell {
    let reuseIdentifier = reuseIdentifierForItem(item, view)
    guard let registration = cells[reuseIdentifier] else {
      preconditionFailure(
        "SimpleSource: no cell is registered for reuse identifier '\(reuseIdentifier)' (item \(item.id)); "
          + "call registerCell(method:reuseIdentifier:in:configuration:) first")
    }
    let cell = view.dequeueCell(registration.method, reuseIdentifier: reuseIdentifier, at: position)
    registration.configure(cell, item, position.indexPath, actions)
    return cell
  }

  /// Whether a supplementary view of `kind` is registered.
  package func hasSupplementaryView(ofKind kind: SupplementaryKind) -> Bool {
    supplementaryViews[kind] != nil
  }

  /// Dequeues and configures the supplementary view of `kind` for `section`, or returns `nil` when none is
  /// registered for that kind.
  package func supplementaryView(
    ofKind kind: SupplementaryKind, for section: Section, at position: ItemPosition, in view: View
  ) -> View.SupplementaryView? {
    guard let registration = supplementaryViews[kind] else { return nil }
    let supplementary = view.dequeueSupplementaryView(
      registration.method, kind: kind, reuseIdentifier: registration.reuseIdentifier, at: position)
    registration.configure(supplementary, section, position.indexPath)
    return supplementary
  }

  /// Configures an existing supplementary view of `kind` again for `section`, as a reconfigure does for
  /// cells: the UIKit skin calls it for the visible headers and footers of a section whose content changed
  /// (``StageCalls/reconfigureSections``). Does nothing when no view of `kind` is registered.
  package func configureSupplementaryView(
    _ supplementary: View.SupplementaryView, ofKind kind: SupplementaryKind, for section: Section,
    at position: ItemPosition
  ) {
    supplementaryViews[kind]?.configure(supplementary, section, position.indexPath)
  }

  /// The text header of `section` at `index`, if ``registerHeaderText(_:)`` gave one.
  package func headerTitle(for section: Section, at index: Int) -> String? { headerText?(section, index) }

  /// The text footer of `section` at `index`, if ``registerFooterText(_:)`` gave one.
  package func footerTitle(for section: Section, at index: Int) -> String? { footerText?(section, index) }
}
