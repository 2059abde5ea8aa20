// What a projected source shows of its parent: a filter, an order, and which sections to hide.

/// Which items and sections of a parent source a ``ProjectedDataSource`` shows, and in which order.
///
/// allaboutapps' `isHidden` closures, as a value: change it at run time (a search text, a "show done"
/// switch) with ``ProjectedDataSource/setProjection(_:)`` and the view animates the difference.
///
/// ```swift
/// let open = Projection<Section<String, Task>>(
///   where: { !$0.isDone },
///   sortedBy: { $0.due < $1.due },
///   hidingEmptySections: true)
/// let firstPage = Projection<Section<String, Task>>(sortedBy: { $0.due < $1.due }, rows: 0..<50)
/// let soonest = Projection<Section<String, Task>>(
///   sortedBy: { $0.due < $1.due }, rows: 0..<20, rowsAcrossSections: true)
/// ```
///
/// With ``rows``, each shown section shows only the items at those positions of its filtered and sorted
/// items, or, with ``rowsAcrossSections``, the list as a whole does ("the first 20 by price"): a page of a
/// live query (SQL's `OFFSET` and `LIMIT`), which a service offers as a query parameter
/// (``WireQuery``) and a view moves with ``ProjectedDataSource/moveWindow(to:)``.
///
/// The closures must be pure: the same item gives the same answer as long as it is `==` to itself.
/// A projection asks them only about items that changed, and keeps its earlier answers for the rest.
/// A closure that throws is reported as a ``ProjectionError`` and nothing shown changes.
public struct Projection<Section: SectionType>: Sendable {
  /// The item type.
  public typealias Item = Section.Item

  /// Whether an item is shown; `nil` shows every item.
  public var isIncluded: (@Sendable (Item) throws -> Bool)?
  /// The order of the items inside each section, a strict weak ordering; `nil` keeps the parent's order.
  /// Items it considers equivalent keep the parent's order.
  public var areInIncreasingOrder: (@Sendable (Item, Item) throws -> Bool)?
  /// Whether a section is shown; `nil` shows every section.
  public var isSectionIncluded: (@Sendable (Section) throws -> Bool)?
  /// Whether a section with no shown items is hidden. Decided before ``rows``: a section whose window is
  /// past its last item is shown empty.
  public var hidesEmptySections: Bool
  /// The positions shown in each section, counted after filtering and sorting; `nil` shows every item.
  /// A window past the end shows the items that exist (none when it starts past the end); a negative
  /// bound counts as 0.
  public var rows: Range<Int>? {
    didSet { rows = rows?.clampedAtZero }
  }
  /// Whether ``rows`` counts over the list as a whole ("the first 20 by price" across every section)
  /// instead of in each section. The whole list's order is ``areInIncreasingOrder`` across sections
  /// (items it considers equivalent keep the order of their sections; the parent's order when it is
  /// `nil`), and each shown section shows those of its items inside the window, in that order; a section
  /// with none is shown empty (``hidesEmptySections`` is decided before the window).
  ///
  /// - Complexity: With ``areInIncreasingOrder``, a parent batch whose every changed item sorts after
  ///   the window's last row (before and after the change) costs O(*s* + *k* log *n*) and publishes
  ///   nothing. Any other step reads the window again: O(*e* · *s* log *n*) for a window ending at row *e*
  ///   of *s* shown sections (like SQL's `OFFSET`, a deep window costs its offset).
  public var rowsAcrossSections: Bool

  /// Creates a projection.
  /// - Parameters:
  ///   - isIncluded: Whether an item is shown; `nil` shows every item.
  ///   - areInIncreasingOrder: The order inside each section; `nil` keeps the parent's order.
  ///   - isSectionIncluded: Whether a section is shown; `nil` shows every section.
  ///   - hidingEmptySections: Whether sections with no shown items are hidden.
  ///   - rows: The positions shown in each section, after filtering and sorting; `nil` shows every item.
  ///   - rowsAcrossSections: Whether `rows` counts over the whole list instead of in each section (see
  ///     ``rowsAcrossSections``).
  public init(
    where isIncluded: (@Sendable (Item) throws -> Bool)? = nil,
    sortedBy areInIncreasingOrder: (@Sendable (Item, Item) throws -> Bool)? = nil,
    sectionsWhere isSectionIncluded: (@Sendable (Section) throws -> Bool)? = nil,
    hidingEmptySections: Bool = false,
    rows: Range<Int>? = nil,
    rowsAcrossSections: Bool = false
  ) {
    self.isIncluded = isIncluded
    self.areInIncreasingOrder = areInIncreasingOrder
    self.isSectionIncluded = isSectionIncluded
    self.hidesEmptySections = hidingEmptySections
    self.rows = rows?.clampedAtZero
    self.rowsAcrossSections = rowsAcrossSections
  }

  /// Shows everything, in the parent's order.
  public static var all: Projection { Projection() }
}

/// How a ``ProjectedDataSource`` numbers its versions.
public enum ProjectedVersions: Hashable, Sendable {
  /// Its own count: one version per batch it publishes, from 0 (the default), with a counter of its own:
  /// waiting on it for a parent's ``Version`` throws ``VersionError/Code-swift.enum/otherCounter``.
  case own
  /// The parent's: each batch is numbered with the parent version whose state it shows, and the first
  /// state with the parent's version at the start, so versions have gaps where the parent changed nothing
  /// shown. A client that wrote to the parent and was answered with version *v* holds its write once it
  /// holds *v* or later, if the write changed what it is shown; it counts with the parent's
  /// ``VersionCounter``, so the parent's ``Version``s are waited for here. The projection is then fixed:
  /// ``ProjectedDataSource/setProjection(_:)`` throws ``ProjectionError/Code-swift.enum/projectionFixed``.
  case parent
}

/// Why a projection could not be computed; what was shown before stays.
public struct ProjectionError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public enum Code: String, Hashable, Sendable, CustomStringConvertible {
    /// The raw value.
    public var description: String { rawValue }

    /// ``Projection/isIncluded`` threw for the item.
    case predicateThrew
    /// ``Projection/isSectionIncluded`` threw for the section.
    case sectionPredicateThrew
    /// ``Projection/areInIncreasingOrder`` threw comparing the item with another.
    case orderThrew
    /// ``Projection/areInIncreasingOrder`` is not a strict weak ordering: it said an item comes before
    /// itself, or contradicted itself about the item and its neighbour.
    case invalidOrdering
    /// ``ProjectedDataSource/setProjection(_:)`` on a source whose versions are its parent's
    /// (``ProjectedVersions/parent``): its projection is fixed.
    case projectionFixed
  }

  /// What went wrong.
  public var code: Code
  /// The section involved, described (`"\(id)"`).
  public var section: String?
  /// The item involved, described (`"\(id)"`).
  public var item: String?
  /// What the closure threw, described.
  public var underlying: String?

  /// Creates an error.
  @usableFromInline package init(
    _ code: Code, section: String? = nil, item: String? = nil, underlying: String? = nil
  ) {
    self.code = code
    self.section = section
    self.item = item
    self.underlying = underlying
  }

  /// `predicateThrew: item 42 in section A: <what it threw>`.
  public var description: String {
    var text = "\(code)"
    if let item { text += ": item \(item)" }
    if let section { text += (item == nil ? ": section " : " in section ") + section }
    if let underlying { text += ": \(underlying)" }
    return text
  }
}

extension Range<Int> {
  /// The range with negative bounds raised to 0: positions a window may ask for.
  @inlinable package var clampedAtZero: Range<Int> {
    let lower = Swift.max(lowerBound, 0)
    return lower..<Swift.max(upperBound, lower)
  }
}
