// Typed closures for what the user does with a list: select, display, heights, editing, swipes, accessory taps.

public import Observation
public import SimpleSourceCore

/// What happens to a row's selection after its selection closure ran.
public enum SelectionBehavior: Sendable, Hashable {
  /// The row is deselected at once (the usual choice for a tap that navigates or toggles).
  case deselect
  /// The row stays selected.
  case keep
}

/// An edit the user commits on a row: UIKit's editing styles `.delete` and `.insert`.
public enum EditingAction: Sendable, Hashable {
  case delete
  case insert
}

/// The side of a row a swipe reveals actions on.
public enum SwipeEdge: Sendable, Hashable {
  case leading
  case trailing
}

/// An action a swipe reveals, described without UIKit; the skin makes a `UIContextualAction` of it.
public struct SwipeAction<Item>: Sendable {
  /// How the action looks.
  public enum Style: Sendable, Hashable {
    case normal
    case destructive
  }

  /// The button's title.
  public var title: String?
  /// Normal or destructive (red).
  public var style: Style
  /// The name of a system image for the button, if any.
  public var systemImageName: String?
  /// Performs the action on the item the row showed when it was swiped. Returns whether it was done
  /// (UIKit's completion handler); a thrown error reaches ``ListInteractions/interactionFailed`` and counts
  /// as not done, so the row slides back as it was.
  public var handler: @MainActor (_ item: Item, _ position: ItemPosition) async throws -> Bool

  /// Creates an action.
  public init(
    title: String?, style: Style = .normal, systemImageName: String? = nil,
    handler: @escaping @MainActor (_ item: Item, _ position: ItemPosition) async throws -> Bool
  ) {
    self.title = title
    self.style = style
    self.systemImageName = systemImageName
    self.handler = handler
  }
}

/// The actions a swipe reveals (UIKit's `UISwipeActionsConfiguration`).
public struct SwipeActions<Item>: Sendable {
  /// The actions, from the edge inwards.
  public var actions: [SwipeAction<Item>]
  /// Whether a full swipe performs the first action.
  public var performsFirstActionWithFullSwipe: Bool

  /// Creates a configuration.
  public init(_ actions: [SwipeAction<Item>], performsFirstActionWithFullSwipe: Bool = true) {
    self.actions = actions
    self.performsFirstActionWithFullSwipe = performsFirstActionWithFullSwipe
  }
}

/// The closures for items of one kind (one reuse identifier), or for every item
/// (``ListInteractions/all``). Each receives the item as the view shows it and its position there.
/// Heights are in points.
public struct ItemInteractions<Item> {
  /// The user tapped the row; returns whether it stays selected.
  public var didSelect: (@MainActor (_ item: Item, _ position: ItemPosition) -> SelectionBehavior)?
  /// The row is about to appear on screen.
  public var willDisplay: (@MainActor (_ item: Item, _ position: ItemPosition) -> Void)?
  /// The row's height.
  public var height: (@MainActor (_ item: Item, _ position: ItemPosition) -> Double)?
  /// The row's estimated height, for rows not yet laid out.
  public var estimatedHeight: (@MainActor (_ item: Item, _ position: ItemPosition) -> Double)?
  /// Whether the row can be edited (swiped to delete, or shown with an editing control).
  public var canEdit: (@MainActor (_ item: Item, _ position: ItemPosition) -> Bool)?
  /// The edit the row offers in editing mode; `nil` offers none.
  public var editingAction: (@MainActor (_ item: Item, _ position: ItemPosition) -> EditingAction?)?
  /// The user committed an edit: make it a mutation of the source. The row changes when the source's batch
  /// arrives; a thrown error leaves it as it was and reaches ``ListInteractions/interactionFailed``.
  public var commitEdit:
    (@MainActor (_ action: EditingAction, _ item: Item, _ position: ItemPosition) async throws -> Void)?
  /// The actions a swipe from the leading edge reveals.
  public var leadingSwipeActions:
    (@MainActor (_ item: Item, _ position: ItemPosition) -> SwipeActions<Item>?)?
  /// The actions a swipe from the trailing edge reveals.
  public var trailingSwipeActions:
    (@MainActor (_ item: Item, _ position: ItemPosition) -> SwipeActions<Item>?)?
  /// The user tapped the row's accessory button.
  public var accessoryTapped: (@MainActor (_ item: Item, _ position: ItemPosition) -> Void)?
  /// The item's cell sent an action (a ``ListCell``'s ``ListCell/send(_:)``: a switch, a slider, a
  /// text field, a button), typically to mutate the source. It receives the item and its position as the
  /// view shows them when the action arrives; an action of a cell whose item is gone runs nothing.
  public var cellAction: (@MainActor (_ action: CellAction, _ item: Item, _ position: ItemPosition) -> Void)?

  /// Called after any closure is set or removed: the UIKit skin then makes the view ask again which
  /// methods its delegate and data source answer, since UIKit caches that when they are assigned.
  package var onChange: (@MainActor () -> Void)?

  /// No closures.
  public init() {}
}

/// One thing the user does that a closure can handle; the UIKit skin maps each to its delegate methods.
public enum ListInteraction: Sendable, Hashable, CaseIterable {
  case select, willDisplay, height, estimatedHeight, headerHeight, footerHeight, estimatedHeaderHeight
  case estimatedFooterHeight, canEdit, editingAction, commitEdit, leadingSwipe, trailingSwipe, accessoryTap
}

/// What the user does with a list's rows and sections, as typed closures: for the items of one reuse
/// identifier (``forItems(withReuseIdentifier:_:)``), with data-source-wide fallbacks (``all``), in the
/// spirit of allaboutapps' DataSource.
///
/// ```swift
/// viewDataSource.interactions.forItems(withReuseIdentifier: "Employee") { employee in
///   employee.didSelect = { item, position in
///     show(item)
///     return .deselect
///   }
///   employee.commitEdit = { action, item, _ in try await employees.deleteItems([item.id]) }
/// }
/// viewDataSource.interactions.all.height = { _, _ in 44 }
/// ```
///
/// **Which closure runs.** The one registered for the item's reuse identifier (from the ``ViewFactory``);
/// else the one in ``all``; else none, and the view does what it does by default (in UIKit: a
/// `fallbackDelegate` gets the methods of interactions that have no closure at all).
///
/// **Which item.** The closures run on the main actor with the item the view shows at the position the
/// view reports, read from the view data source's own copy, which always matches what the view shows
/// (batches swap it inside the update). So a tap on a row that a batch just moved reaches the item now
/// there; a position that no longer exists (a batch just removed the row) runs no closure. Closures that
/// mutate the source do so by id, and the row changes when the source's batch arrives.
@MainActor
public final class ListInteractions<Section: SectionType> {
  /// The item type.
  public typealias Item = Section.Item

  /// The closures for each reuse identifier.
  public var items: [String: ItemInteractions<Item>] = [:] { didSet { changed() } }
  /// The closures for every item that its reuse identifier's closures leave unhandled.
  public var all = ItemInteractions<Item>() { didSet { changed() } }
  /// A section header's height.
  public var headerHeight: (@MainActor (_ section: Section, _ index: Int) -> Double)? {
    didSet { changed() }
  }
  /// A section footer's height.
  public var footerHeight: (@MainActor (_ section: Section, _ index: Int) -> Double)? {
    didSet { changed() }
  }
  /// A section header's estimated height.
  public var estimatedHeaderHeight: (@MainActor (_ section: Section, _ index: Int) -> Double)? {
    didSet { changed() }
  }
  /// A section footer's estimated height.
  public var estimatedFooterHeight: (@MainActor (_ section: Section, _ index: Int) -> Double)? {
    didSet { changed() }
  }
  /// Receives the errors of ``ItemInteractions/commitEdit`` and of swipe actions, with the item they were
  /// about.
  public var interactionFailed: (@MainActor (_ item: Item, _ error: any Error) -> Void)?

  /// Called after any closure is set or removed: the UIKit skin then makes the view ask again which
  /// methods its delegate and data source answer, since UIKit caches that when they are assigned.
  package var onChange: (@MainActor () -> Void)?

  /// Observation of the closures, where Observation exists (iOS 17, macOS 14): a SwiftUI row that asked
  /// for its swipe actions asks again when any closure changes.
  private let observation: (any Sendable)? =
    if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) { InteractionsObservation() } else { nil }
  /// Counts the changes of the closures: what observers of them track.
  private(set) var revision = 0

  /// No closures.
  public init() {}

  /// A closure was set or removed: observers are told, and the UIKit skin's hook runs.
  private func changed() {
    if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *),
      let observation = observation as? InteractionsObservation
    {
      observation.registrar.withMutation(of: self, keyPath: \.revision) { revision += 1 }
    } else {
      revision += 1
    }
    onChange?()
  }

  /// A closure is read: an observer is told when any changes.
  private func accessed() {
    if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *),
      let observation = observation as? InteractionsObservation
    {
      observation.registrar.access(self, keyPath: \.revision)
    }
  }

  /// Sets the closures for the items of `reuseIdentifier`.
  /// - Complexity: O(1).
  public func forItems(
    withReuseIdentifier reuseIdentifier: String, _ configure: (inout ItemInteractions<Item>) -> Void
  ) {
    configure(&items[reuseIdentifier, default: ItemInteractions()])
  }

  /// The closure at `key` for an item of `reuseIdentifier`: its own, else the data-source-wide one.
  /// - Complexity: O(1).
  public func closure<Closure>(
    _ key: KeyPath<ItemInteractions<Item>, Closure?>, reuseIdentifier: String
  ) -> Closure? {
    accessed()
    return items[reuseIdentifier]?[keyPath: key] ?? all[keyPath: key]
  }

  /// Whether any closure handles `interaction`, for any item or section. The UIKit skin answers the
  /// delegate methods of interactions that no closure handles from its `fallbackDelegate`.
  /// - Complexity: O(*r*) in the number of reuse identifiers with closures.
  public func handles(_ interaction: ListInteraction) -> Bool {
    switch interaction {
    case .headerHeight: return headerHeight != nil
    case .footerHeight: return footerHeight != nil
    case .estimatedHeaderHeight: return estimatedHeaderHeight != nil
    case .estimatedFooterHeight: return estimatedFooterHeight != nil
    default: break
    }
    return ([all] + items.values).contains { Self.has(interaction, in: $0) }
  }

  private static func has(_ interaction: ListInteraction, in closures: ItemInteractions<Item>) -> Bool {
    switch interaction {
    case .select: closures.didSelect != nil
    case .willDisplay: closures.willDisplay != nil
    case .height: closures.height != nil
    case .estimatedHeight: closures.estimatedHeight != nil
    case .canEdit: closures.canEdit != nil
    case .editingAction: closures.editingAction != nil
    case .commitEdit: closures.commitEdit != nil
    case .leadingSwipe: closures.leadingSwipeActions != nil
    case .trailingSwipe: closures.trailingSwipeActions != nil
    case .accessoryTap: closures.accessoryTapped != nil
    case .headerHeight, .footerHeight, .estimatedHeaderHeight, .estimatedFooterHeight: false
    }
  }
}

extension ListInteractions {
  /// The kind of view whose delegate methods `answers(selectorNamed:in:)` knows.
  package enum ViewKind: Sendable, Hashable {
    case table
    case collection
  }

  /// The Objective-C selector of each delegate or data source method that an interaction answers, and the
  /// interactions any of whose closures make the UIKit skin answer it.
  static func selectors(of kind: ViewKind) -> [String: [ListInteraction]] {
    switch kind {
    case .table:
      [
        "tableView:didSelectRowAtIndexPath:": [.select],
        "tableView:willDisplayCell:forRowAtIndexPath:": [.willDisplay],
        "tableView:heightForRowAtIndexPath:": [.height],
        "tableView:estimatedHeightForRowAtIndexPath:": [.estimatedHeight],
        "tableView:heightForHeaderInSection:": [.headerHeight],
        "tableView:heightForFooterInSection:": [.footerHeight],
        "tableView:estimatedHeightForHeaderInSection:": [.estimatedHeaderHeight],
        "tableView:estimatedHeightForFooterInSection:": [.estimatedFooterHeight],
        "tableView:canEditRowAtIndexPath:": [.canEdit, .commitEdit],
        "tableView:editingStyleForRowAtIndexPath:": [.editingAction, .commitEdit],
        "tableView:commitEditingStyle:forRowAtIndexPath:": [.commitEdit],
        "tableView:leadingSwipeActionsConfigurationForRowAtIndexPath:": [.leadingSwipe],
        "tableView:trailingSwipeActionsConfigurationForRowAtIndexPath:": [.trailingSwipe],
        "tableView:accessoryButtonTappedForRowWithIndexPath:": [.accessoryTap],
      ]
    case .collection:
      [
        "collectionView:didSelectItemAtIndexPath:": [.select],
        "collectionView:willDisplayCell:forItemAtIndexPath:": [.willDisplay],
      ]
    }
  }

  /// Whether the skin answers the method of a table or collection view delegate (or data source) named
  /// `selector` with these closures: `nil` when no interaction answers that method, otherwise whether a
  /// closure is registered for it. The UIKit skin sends the methods it does not answer to the
  /// `fallbackDelegate` (or `fallbackDataSource`), so a fallback keeps every method no closure handles.
  ///
  /// - Important: UIKit asks which methods its delegate answers when the delegate is set. Register the
  ///   closures and the fallbacks first, then set the view's `delegate` (set it again after changing them).
  /// - Complexity: O(*r*) in the number of reuse identifiers with closures.
  package func answers(selectorNamed selector: String, in kind: ViewKind) -> Bool? {
    Self.selectors(of: kind)[selector].map { $0.contains(where: handles) }
  }

  /// The selectors of every method a closure makes the UIKit skin answer now: when the set changes after
  /// the view's delegate or data source was assigned, UIKit's cached answers are stale.
  /// - Complexity: O(*m* · *r*) for *m* methods and *r* reuse identifiers with closures.
  package func answeredSelectors(in kind: ViewKind) -> Set<String> {
    Set(
      Self.selectors(of: kind).compactMap { name, interactions in
        interactions.contains(where: handles) ? name : nil
      })
  }
}

/// ``ListInteractions`` is observable where Observation exists: reading a closure through
/// ``ListInteractions/closure(_:reuseIdentifier:)`` tracks every closure, so a SwiftUI row that asked for
/// its swipe actions asks again when they change.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension ListInteractions: Observable {}

/// The registrar behind ``ListInteractions``' observation.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
final class InteractionsObservation: Sendable {
  let registrar = ObservationRegistrar()
}
