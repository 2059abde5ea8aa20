// An immutable, validated list of sections with constant-time lookup from ids to positions.

/// An immutable list of sections with O(1) lookup from an item or section id to its position and back.
///
/// A snapshot is validated when it is made: section ids are unique, and item ids are unique across the
/// whole snapshot (an item id names one row, wherever it is). It is a value: copies share storage, and
/// it can be sent between tasks freely.
///
/// ```swift
/// let snapshot = try Snapshot([
///   Section(id: "fruit", header: "Fruit", items: [Fruit(id: 1, name: "Apple")]),
/// ])
/// snapshot.position(ofItem: 1)   // [0, 0]
/// ```
public struct Snapshot<Section: SectionType>: Sendable {
  /// The item type of the sections.
  public typealias Item = Section.Item
  /// The error a snapshot throws for duplicate ids.
  public typealias Error = DataSourceError<Section.ID, Item.ID>

  /// The sections, in display order.
  public let sections: [Section]
  @usableFromInline let sectionIndexByID: [Section.ID: Int]
  @usableFromInline let positionByItemID: [Item.ID: PackedPosition]
  /// `itemOffsets[s]` is the number of items in the sections before `s`; one extra entry holds the total.
  @usableFromInline let itemOffsets: [Int]

  /// Creates an empty snapshot.
  public init() {
    sections = []
    sectionIndexByID = [:]
    positionByItemID = [:]
    itemOffsets = [0]
  }

  /// Creates a snapshot of `sections`, rejecting duplicate ids.
  ///
  /// - Parameter sections: The sections in display order.
  /// - Throws: ``DataSourceError`` with code ``DataSourceErrorCode/duplicateSectionID`` naming the id and
  ///   both section indices, or ``DataSourceErrorCode/duplicateItemID`` naming the id and both positions.
  ///   The first duplicate in display order is reported.
  /// - Complexity: O(*n*) expected, for *n* items: one hash insertion per item and per section.
  @inlinable
  public init(_ sections: [Section]) throws(Error) {
    var sectionIndexByID = [Section.ID: Int](minimumCapacity: sections.count)
    var offsets = [Int]()
    offsets.reserveCapacity(sections.count + 1)
    var total = 0
    for section in sections {
      offsets.append(total)
      total += section.items.count
    }
    offsets.append(total)
    var positionByItemID = [Item.ID: PackedPosition](minimumCapacity: total)
    for sectionIndex in sections.indices {
      let section = sections[sectionIndex]
      if let first = sectionIndexByID.updateValue(sectionIndex, forKey: section.id) {
        throw .duplicateSection(section.id, first: first, second: sectionIndex)
      }
      let items = section.items
      for itemIndex in items.indices {
        let packed = PackedPosition(section: sectionIndex, item: itemIndex)
        if let first = positionByItemID.updateValue(packed, forKey: items[itemIndex].id) {
          throw .duplicateItem(
            items[itemIndex].id, first: first.position,
            second: ItemPosition(section: sectionIndex, item: itemIndex))
        }
      }
    }
    self.sections = sections
    self.sectionIndexByID = sectionIndexByID
    self.positionByItemID = positionByItemID
    self.itemOffsets = offsets
  }

  /// Creates a snapshot of sections that are known to be valid (derived from valid snapshots).
  @usableFromInline
  init(trusted sections: [Section]) {
    do {
      try self.init(sections)
    } catch {
      preconditionFailure("SimpleSource internal inconsistency: derived snapshot is invalid: \(error)")
    }
  }

  /// The number of items in all sections.
  @inlinable public var itemCount: Int { itemOffsets[itemOffsets.count - 1] }

  /// Whether the snapshot has no sections.
  @inlinable public var isEmpty: Bool { sections.isEmpty }

  /// The ids of the sections, in order.
  public var sectionIDs: [Section.ID] { sections.map(\.id) }

  /// The ids of the items of the section at `sectionIndex`, in order.
  public func itemIDs(inSection sectionIndex: Int) -> [Item.ID] { sections[sectionIndex].items.map(\.id) }

  /// The index of the section with the given id, or `nil` if there is none.
  /// - Complexity: O(1) expected.
  @inlinable
  public func index(ofSection id: Section.ID) -> Int? { sectionIndexByID[id] }

  /// The position of the item with the given id, or `nil` if there is none.
  /// - Complexity: O(1) expected.
  @inlinable
  public func position(ofItem id: Item.ID) -> ItemPosition? { positionByItemID[id]?.position }

  /// Whether an item with the given id exists.
  /// - Complexity: O(1) expected.
  @inlinable
  public func contains(item id: Item.ID) -> Bool { positionByItemID[id] != nil }

  /// The section with the given id, or `nil` if there is none.
  /// - Complexity: O(1) expected.
  public func section(withID id: Section.ID) -> Section? { index(ofSection: id).map { sections[$0] } }

  /// The item with the given id, or `nil` if there is none.
  /// - Complexity: O(1) expected.
  public func item(withID id: Item.ID) -> Item? { position(ofItem: id).map { self[$0] } }

  /// The item at `position`.
  /// - Precondition: `position` is within the snapshot; check with ``contains(_:)`` first when unsure.
  @inlinable
  public subscript(position: ItemPosition) -> Item { sections[position.section].items[position.item] }

  /// Whether `position` names an item in this snapshot.
  public func contains(_ position: ItemPosition) -> Bool {
    sections.indices.contains(position.section)
      && sections[position.section].items.indices.contains(position.item)
  }
}

extension Snapshot: Equatable where Section: Equatable {
  /// Two snapshots are equal when their sections are equal.
  public static func == (lhs: Snapshot, rhs: Snapshot) -> Bool { lhs.sections == rhs.sections }
}

extension Snapshot: CustomStringConvertible {
  /// The section ids, each with its item ids: `[A: 1 2 | B: 3]`.
  public var description: String {
    "["
      + sections.map { "\($0.id): " + $0.items.map { "\($0.id)" }.joined(separator: " ") }
      .joined(separator: " | ") + "]"
  }
}

/// A position packed in one word, to keep the id index small and fast.
@usableFromInline
struct PackedPosition: Sendable {
  @usableFromInline var raw: UInt64

  @inlinable
  init(section: Int, item: Int) {
    precondition(section < 1 << 32 && item < 1 << 32, "SimpleSource supports at most 2^32 sections and items")
    raw = UInt64(truncatingIfNeeded: section) << 32 | UInt64(truncatingIfNeeded: item)
  }

  @inlinable var section: Int { Int(truncatingIfNeeded: raw >> 32) }
  @inlinable var item: Int { Int(truncatingIfNeeded: raw & 0xFFFF_FFFF) }
  @inlinable var position: ItemPosition { ItemPosition(section: section, item: item) }
}
