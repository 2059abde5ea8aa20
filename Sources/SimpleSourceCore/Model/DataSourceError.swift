// The typed error for bad input to snapshots and data sources: it names the offending id or index.

/// An error for input that a snapshot or data source rejects.
///
/// The error names what was wrong: the offending section or item id and every position involved. The
/// value it was applied to is left exactly as it was.
///
/// New kinds of error are new ``Code`` values, so clients that `switch` over codes keep compiling; match
/// with `if error.code == .duplicateItemID`.
///
/// Where the error reaches you as `any Error` (a task group, a closure that throws several kinds, a
/// `transaction` body not marked `throws(Error)`), match the code itself:
///
/// ```swift
/// do {
///   try await withThrowingTaskGroup(of: Int.self) { group in
///     group.addTask { try await source.deleteItems(["grace"]) }
///     try await group.waitForAll()
///   }
/// } catch DataSourceErrorCode.unknownItemID {
///   // someone deleted her first
/// }
/// ```
public struct DataSourceError<SectionID: Hashable & Sendable, ItemID: Hashable & Sendable>: Error, Hashable,
  CustomStringConvertible
{
  /// What kind of input was rejected; see ``DataSourceErrorCode``.
  public typealias Code = DataSourceErrorCode

  /// What kind of input was rejected.
  public var code: Code
  /// The offending section id, if the error is about a section.
  public var sectionID: SectionID?
  /// The offending item id, if the error is about an item.
  public var itemID: ItemID?
  /// The section indices involved, in ascending order.
  ///
  /// For a duplicate id these are where the two sections would stand if the mutation were made: an
  /// existing section after an insertion point is counted at its shifted index.
  public var sectionIndices: [Int]
  /// The item positions involved, in ascending order.
  ///
  /// For a duplicate id these are where the two items would stand if the mutation were made: an existing
  /// item after an insertion point is counted at its shifted position.
  public var positions: [ItemPosition]
  /// What was wrong, in words, where the code and the ids do not say it all (which change of a batch did
  /// not apply, and to what); `nil` otherwise.
  public var detail: String?

  /// Creates an error.
  @usableFromInline package init(
    code: Code,
    sectionID: SectionID? = nil,
    itemID: ItemID? = nil,
    sectionIndices: [Int] = [],
    positions: [ItemPosition] = [],
    detail: String? = nil
  ) {
    self.code = code
    self.sectionID = sectionID
    self.itemID = itemID
    self.sectionIndices = sectionIndices
    self.positions = positions
    self.detail = detail
  }

  /// A sentence naming the code, the id and the positions.
  public var description: String {
    var parts = ["\(code)"]
    if let sectionID { parts.append("section id \(sectionID)") }
    if let itemID { parts.append("item id \(itemID)") }
    if !sectionIndices.isEmpty {
      parts.append("at section indices \(sectionIndices.map(String.init).joined(separator: " and "))")
    }
    if !positions.isEmpty {
      parts.append("at positions \(positions.map(\.description).joined(separator: " and "))")
    }
    if let detail { parts.append(detail) }
    return parts.joined(separator: ": ")
  }
}

extension DataSourceError {
  @usableFromInline
  static func duplicateSection(_ id: SectionID, first: Int, second: Int) -> Self {
    Self(code: .duplicateSectionID, sectionID: id, sectionIndices: [first, second].sorted())
  }

  @usableFromInline
  package static func unknownSection(_ id: SectionID) -> Self { Self(code: .unknownSectionID, sectionID: id) }
  @usableFromInline
  package static func unknownItem(_ id: ItemID) -> Self { Self(code: .unknownItemID, itemID: id) }
  @usableFromInline
  package static func sectionOutOfRange(_ index: Int) -> Self {
    Self(code: .sectionIndexOutOfRange, sectionIndices: [index])
  }
  @usableFromInline
  package static func itemOutOfRange(_ position: ItemPosition) -> Self {
    Self(code: .itemIndexOutOfRange, positions: [position])
  }

  @usableFromInline
  static func duplicateItem(_ id: ItemID, first: ItemPosition, second: ItemPosition) -> Self {
    Self(code: .duplicateItemID, itemID: id, positions: [first, second].sorted())
  }
}

/// A ``DataSourceError`` of any section and item id types, as `catch` sees it through `any Error`.
protocol DataSourceErrorCoded: Error {
  var code: DataSourceErrorCode { get }
}

extension DataSourceError: DataSourceErrorCoded {}

extension DataSourceErrorCode {
  /// Whether `error` is a ``DataSourceError`` (of any source) with this code: the pattern behind
  /// `catch DataSourceErrorCode.unknownItemID { }`, where the error is `any Error`.
  /// - Complexity: O(1).
  public static func ~= (code: DataSourceErrorCode, error: any Error) -> Bool {
    (error as? any DataSourceErrorCoded)?.code == code
  }
}

/// What kind of input a ``DataSourceError`` rejected.
public struct DataSourceErrorCode: Hashable, Sendable, CustomStringConvertible {
  /// A stable, readable name of the code, such as `"duplicateItemID"`.
  public let rawValue: String

  /// Creates a code from its name.
  @usableFromInline package init(rawValue: String) { self.rawValue = rawValue }

  /// Two sections share one id; ``DataSourceError/sectionIndices`` holds both indices.
  public static let duplicateSectionID = DataSourceErrorCode(rawValue: "duplicateSectionID")
  /// Two items share one id; ``DataSourceError/positions`` holds both positions.
  public static let duplicateItemID = DataSourceErrorCode(rawValue: "duplicateItemID")

  /// No section has this id; ``DataSourceError/sectionID`` names it.
  public static let unknownSectionID = DataSourceErrorCode(rawValue: "unknownSectionID")
  /// No item has this id; ``DataSourceError/itemID`` names it.
  public static let unknownItemID = DataSourceErrorCode(rawValue: "unknownItemID")
  /// An update changed the id of the item it was given.
  public static let changedItemID = DataSourceErrorCode(rawValue: "changedItemID")
  /// A patch of an item does not give a valid item (a field of the wrong type, a required field removed,
  /// an item type that cannot be patched); ``DataSourceError/itemID`` names the item and
  /// ``DataSourceError/detail`` what was wrong.
  public static let invalidPatch = DataSourceErrorCode(rawValue: "invalidPatch")
  /// A section index is out of range; ``DataSourceError/sectionIndices`` holds it.
  public static let sectionIndexOutOfRange = DataSourceErrorCode(rawValue: "sectionIndexOutOfRange")
  /// An item position is out of range; ``DataSourceError/positions`` holds it.
  public static let itemIndexOutOfRange = DataSourceErrorCode(rawValue: "itemIndexOutOfRange")
  /// A move relative to the moved element itself, such as moving an item before itself.
  public static let moveRelativeToItself = DataSourceErrorCode(rawValue: "moveRelativeToItself")

  /// The task was cancelled while its write waited for its turn behind a prepared write (see
  /// <doc:WritingThroughADatabase>); nothing was prepared or made.
  public static let cancelled = DataSourceErrorCode(rawValue: "cancelled")

  /// A write prepared to start from a version the source no longer (or not yet) holds; nothing was made.
  public static let unexpectedVersion = DataSourceErrorCode(rawValue: "unexpectedVersion")

  /// A batch does not apply to the sections it was given: they are not the state at its `from` version;
  /// ``DataSourceError/detail`` names the change and what was found.
  public static let batchDoesNotApply = DataSourceErrorCode(rawValue: "batchDoesNotApply")

  /// The code's name.
  public var description: String { rawValue }
}
