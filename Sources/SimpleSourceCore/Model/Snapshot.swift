// An immutable, validated list of sections with fast lookup from ids to positions, in a flat or persistent form.

/// An immutable list of sections with fast lookup from an item or section id to its position and back.
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
///
/// **Two forms, each made when first needed.** A snapshot made from arrays (``init(_:)``) holds them and a
/// hash index: lookups are O(1). A snapshot a data source made by editing the previous one holds the
/// persistent form: each section's items in a B-tree and an id index that shares structure with the
/// version before, so *k* edits cost O(*k* log *n*) and lookups O(log *n*). Whatever needs the other form
/// (``sections`` of an edited snapshot, or a full ``Changeset`` between two of them) builds it once, in
/// O(*n*), and the snapshot keeps it.
public struct Snapshot<Section: SectionType>: Sendable {
  /// The item type of the sections.
  public typealias Item = Section.Item
  /// The error a snapshot throws for duplicate ids.
  public typealias Error = DataSourceError<Section.ID, Item.ID>

  @usableFromInline let storage: SnapshotStorage<Section>

  /// Creates an empty snapshot.
  @inlinable public init() { storage = SnapshotStorage(flat: FlatSnapshot()) }

  /// Creates a snapshot of `sections`, rejecting duplicate ids.
  ///
  /// - Parameter sections: The sections in display order.
  /// - Throws: ``DataSourceError`` with code ``DataSourceErrorCode/duplicateSectionID`` naming the id and
  ///   both section indices, or ``DataSourceErrorCode/duplicateItemID`` naming the id and both positions.
  ///   The first duplicate in display order is reported.
  /// - Complexity: O(*n*) expected, for *n* items: one hash insertion per item and per section.
  @inlinable
  public init(_ sections: [Section]) throws(Error) {
    storage = SnapshotStorage(flat: try FlatSnapshot(sections))
  }

  /// Creates a snapshot of sections that are known to be valid (derived from valid snapshots).
  @inlinable
  init(trusted sections: [Section]) { storage = SnapshotStorage(flat: FlatSnapshot(trusted: sections)) }

  /// A snapshot of sections known to be valid that shares `previous`'s index when they keep its section
  /// and item ids in place (see ``FlatSnapshot/reindexed(_:)``), and indexes them otherwise.
  /// - Complexity: O(*n*) id comparisons when the ids stay in place (O(1) per section whose items share
  ///   storage with `previous`'s), one hash per id otherwise.
  @inlinable
  init(trusted sections: [Section], reindexing previous: Snapshot) {
    self = previous.sharingIndex(with: sections) ?? Snapshot(trusted: sections)
  }

  /// A snapshot of `sections` that shares this one's index, when this one has its flat form already
  /// and `sections` keep its section and item ids in place (see ``FlatSnapshot/reindexed(_:)``); `nil`
  /// otherwise. Valid without a check, since its ids are this one's.
  /// - Complexity: O(*s*) plus one id comparison per item of a section whose items do not share storage
  ///   with this one's.
  @inlinable
  func sharingIndex(with sections: [Section]) -> Snapshot? {
    storage.existingFlat?.reindexed(sections).map(Snapshot.init(flat:))
  }

  /// A snapshot of its flat form.
  @inlinable
  init(flat: FlatSnapshot<Section>) { storage = SnapshotStorage(flat: flat) }

  /// A snapshot of sections known to be valid; the index is built when first needed.
  @inlinable
  package init(trustedLazily sections: [Section]) { storage = SnapshotStorage(trustedSections: sections) }

  /// The own content of the section at `index` (its items may be missing).
  /// - Complexity: O(1).
  @inlinable package func sectionContent(at index: Int) -> Section { storage.sectionContent(at: index) }

  /// A snapshot of its persistent form.
  @inlinable init(tree: SnapshotTree<Section>) { storage = SnapshotStorage(tree: tree) }

  /// The flat form: arrays and a hash index; built in O(*n*) the first time an edited snapshot needs it.
  @inlinable var flat: FlatSnapshot<Section> { storage.flat }

  /// The persistent form; built in O(*n*) the first time a snapshot made from arrays needs it.
  @inlinable var tree: SnapshotTree<Section> { storage.tree }

  /// Whether the persistent form exists already, so that ``tree`` costs O(1).
  @inlinable var hasPersistentForm: Bool { storage.hasTree }

  /// Whether the two hold the same sections (ids and own content) and equal items in the same order:
  /// O(1) for copies of one snapshot, O(*s* + *k* log *n*) for persistent versions *k* edits apart,
  /// otherwise O(*n*) over the arrays.
  @inlinable package func hasSameContent(as other: Snapshot) -> Bool {
    if storage === other.storage { return true }
    if itemCount != other.itemCount || sectionCount != other.sectionCount { return false }
    if hasPersistentForm && other.hasPersistentForm { return tree.hasSameContent(as: other.tree) }
    return Self.same(sections, other.sections)
  }

  /// Whether two lists are equal: same ids in the same order, same section content, same items.
  /// - Complexity: O(*n*), stopping at the first difference.
  @inlinable
  static func same(_ lhs: [Section], _ rhs: [Section]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for (left, right) in zip(lhs, rhs) {
      guard left.id == right.id, left.isContentEqual(to: right), left.items == right.items else {
        return false
      }
    }
    return true
  }

  /// Whether the sections exist as arrays already, so that ``sections`` costs O(1).
  @inlinable var hasArrays: Bool { storage.hasArrays }

  /// The sections, in display order.
  /// - Complexity: O(1) for a snapshot made from arrays; O(*n*) the first time for an edited one (see
  ///   ``Snapshot``). Prefer the lookups below, which never copy the list.
  @inlinable public var sections: [Section] { storage.sections }
  @inlinable var sectionIndexByID: [Section.ID: Int] { flat.sectionIndexByID }
  @inlinable var positionByItemID: [Item.ID: PackedPosition] { flat.positionByItemID }
  @inlinable var itemOffsets: [Int] { flat.itemOffsets }

  /// The number of items in all sections.
  /// - Complexity: O(1).
  @inlinable public var itemCount: Int { storage.itemCount }

  /// The number of sections.
  /// - Complexity: O(1).
  @inlinable public var sectionCount: Int { storage.sectionCount }

  /// Whether the snapshot has no sections.
  @inlinable public var isEmpty: Bool { sectionCount == 0 }

  /// The number of items in the section at `sectionIndex`.
  /// - Complexity: O(1).
  @inlinable public func itemCount(inSection sectionIndex: Int) -> Int {
    storage.itemCount(inSection: sectionIndex)
  }

  /// The ids of the sections, in order.
  /// - Complexity: O(*s*) for *s* sections.
  @inlinable public var sectionIDs: [Section.ID] { storage.sectionIDs }

  /// The ids of the items of the section at `sectionIndex`, in order.
  /// - Complexity: O(size of the section).
  @inlinable public func itemIDs(inSection sectionIndex: Int) -> [Item.ID] {
    storage.itemIDs(inSection: sectionIndex)
  }

  /// The index of the section with the given id, or `nil` if there is none.
  /// - Complexity: O(1) expected.
  @inlinable public func index(ofSection id: Section.ID) -> Int? { storage.index(ofSection: id) }

  /// The position of the item with the given id, or `nil` if there is none.
  /// - Complexity: O(1) expected for a snapshot made from arrays, O(log *n*) for an edited one.
  @inlinable public func position(ofItem id: Item.ID) -> ItemPosition? { storage.position(ofItem: id) }

  /// Whether an item with the given id exists.
  /// - Complexity: as ``position(ofItem:)``.
  @inlinable public func contains(item id: Item.ID) -> Bool { storage.contains(item: id) }

  /// The section with the given id, with its items, or `nil` if there is none.
  /// - Complexity: O(1) for a snapshot made from arrays; O(size of the section) for an edited one.
  @inlinable public func section(withID id: Section.ID) -> Section? {
    index(ofSection: id).map(storage.section(at:))
  }

  /// The section at `index`, with its items.
  /// - Complexity: as ``section(withID:)``.
  @inlinable public func section(at index: Int) -> Section { storage.section(at: index) }

  /// The item with the given id, or `nil` if there is none.
  /// - Complexity: as ``position(ofItem:)``.
  @inlinable public func item(withID id: Item.ID) -> Item? { position(ofItem: id).map { self[$0] } }

  /// The item at `position`.
  /// - Precondition: `position` is within the snapshot; check with ``contains(_:)`` first when unsure.
  /// - Complexity: O(1) for a snapshot made from arrays, O(log *n*) for an edited one.
  @inlinable public subscript(position: ItemPosition) -> Item { storage.item(at: position) }

  /// Whether `position` names an item in this snapshot.
  /// - Complexity: O(1).
  @inlinable public func contains(_ position: ItemPosition) -> Bool {
    (0..<sectionCount).contains(position.section)
      && (0..<itemCount(inSection: position.section)).contains(position.item)
  }
}

/// The flat form of a snapshot: the sections as arrays, and a hash index from ids to positions.
@usableFromInline
struct FlatSnapshot<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item

  /// The sections, in display order.
  @usableFromInline let sections: [Section]
  @usableFromInline let sectionIndexByID: [Section.ID: Int]
  @usableFromInline let positionByItemID: [Item.ID: PackedPosition]
  /// `itemOffsets[s]` is the number of items in the sections before `s`; one extra entry holds the total.
  @usableFromInline let itemOffsets: [Int]

  @inlinable
  init() {
    sections = []
    sectionIndexByID = [:]
    positionByItemID = [:]
    itemOffsets = [0]
  }

  /// The number of items in all sections.
  @inlinable var itemCount: Int { itemOffsets[itemOffsets.count - 1] }

  /// The item at `position`.
  @inlinable
  subscript(position: ItemPosition) -> Item { sections[position.section].items[position.item] }

  /// The flat form of sections known to be valid.
  @inlinable
  init(trusted sections: [Section]) {
    do {
      try self.init(sections)
    } catch {
      preconditionFailure("SimpleSource internal inconsistency: derived snapshot is invalid: \(error)")
    }
  }

  /// See ``Snapshot/init(_:)``.
  @inlinable
  init(_ sections: [Section]) throws(DataSourceError<Section.ID, Item.ID>) {
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
    self.init(
      sections: sections, sectionIndexByID: sectionIndexByID, positionByItemID: positionByItemID,
      itemOffsets: offsets)
  }

  /// The flat form of `sections` when they hold exactly this snapshot's section and item ids in the same
  /// order, sharing this index: nothing is hashed or allocated, and they are valid since these ids are.
  /// `nil` when any count or id differs.
  /// - Complexity: O(*s*) for *s* sections whose items share storage with this snapshot's (untouched by a
  ///   caller that edited a copy); O(*m*) id comparisons for the other sections' *m* items.
  @inlinable
  func reindexed(_ sections: [Section]) -> FlatSnapshot? {
    guard sections.count == self.sections.count else { return nil }
    for (old, new) in zip(self.sections, sections) {
      guard old.id == new.id, Self.sameIDs(old.items, new.items) else { return nil }
    }
    return FlatSnapshot(
      sections: sections, sectionIndexByID: sectionIndexByID, positionByItemID: positionByItemID,
      itemOffsets: itemOffsets)
  }

  /// Whether `old` and `new` hold the same ids in the same order; O(1) when they share storage.
  @inlinable
  static func sameIDs(_ old: [Item], _ new: [Item]) -> Bool {
    guard old.count == new.count else { return false }
    if sharesStorage(old, new) { return true }
    for index in old.indices where old[index].id != new[index].id { return false }
    return true
  }

  /// Whether the two arrays are one: the same elements in the same storage (an unedited copy).
  /// - Complexity: O(1).
  @inlinable
  static func sharesStorage(_ old: [Item], _ new: [Item]) -> Bool {
    old.count == new.count
      && old.withUnsafeBufferPointer { old in
        new.withUnsafeBufferPointer { new in old.baseAddress == new.baseAddress }
      }
  }

  /// A flat form from parts known to agree.
  @inlinable
  init(
    sections: [Section], sectionIndexByID: [Section.ID: Int], positionByItemID: [Item.ID: PackedPosition],
    itemOffsets: [Int]
  ) {
    self.sections = sections
    self.sectionIndexByID = sectionIndexByID
    self.positionByItemID = positionByItemID
    self.itemOffsets = itemOffsets
  }
}

/// The forms of one snapshot: the one it was made with, and the other once something needed it.
@usableFromInline
final class SnapshotStorage<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item

  /// The form the snapshot was made with (exactly one is set); the others are derived on demand and kept in
  /// `derived`. `madeSections` are sections known to be valid, whose index is built when first needed.
  @usableFromInline let madeFlat: FlatSnapshot<Section>?
  @usableFromInline let madeTree: SnapshotTree<Section>?
  @usableFromInline let madeSections: [Section]?
  @usableFromInline let derived = Locked<Derived>(Derived())

  /// The forms built on demand: the arrays alone, the flat form (arrays and index), the tree.
  @usableFromInline struct Derived: Sendable {
    @usableFromInline var sections: [Section]?
    @usableFromInline var flat: FlatSnapshot<Section>?
    @usableFromInline var tree: SnapshotTree<Section>?
  }

  @inlinable
  init(flat: FlatSnapshot<Section>) {
    (madeFlat, madeTree, madeSections) = (flat, nil, nil)
  }

  @inlinable init(tree: SnapshotTree<Section>) {
    (madeFlat, madeTree, madeSections) = (nil, tree, nil)
  }

  @inlinable
  init(trustedSections sections: [Section]) {
    (madeFlat, madeTree, madeSections) = (nil, nil, sections)
  }

  /// The flat form if it exists already: O(1), never builds it.
  @inlinable
  var existingFlat: FlatSnapshot<Section>? {
    if let madeFlat { return madeFlat }
    return derived.withLock { $0.flat }
  }

  @inlinable
  var flat: FlatSnapshot<Section> {
    if let madeFlat { return madeFlat }
    let sections = self.sections
    return derived.withLock { derived in
      if let flat = derived.flat { return flat }
      let flat = FlatSnapshot(trusted: sections)
      derived.flat = flat
      return flat
    }
  }

  /// The sections as arrays; built from the tree, without an index, when the snapshot was edited.
  @inlinable
  var sections: [Section] {
    if let sections = madeSections ?? madeFlat?.sections { return sections }
    return derived.withLock { derived in
      if let sections = derived.sections ?? derived.flat?.sections { return sections }
      let sections = madeTree!.sections
      derived.sections = sections
      return sections
    }
  }

  /// The own content of the section at `index`; its items may be missing.
  @inlinable func sectionContent(at index: Int) -> Section {
    if let madeTree { return madeTree.entries[index].header }
    return sections[index]
  }

  @inlinable var hasTree: Bool { madeTree != nil || derived.withLock { $0.tree != nil } }
  @inlinable var hasArrays: Bool {
    madeTree == nil || derived.withLock { $0.flat != nil || $0.sections != nil }
  }

  @inlinable var tree: SnapshotTree<Section> {
    if let madeTree { return madeTree }
    return derived.withLock { derived in
      if let tree = derived.tree { return tree }
      let tree = SnapshotTree(trusted: sections)
      derived.tree = tree
      return tree
    }
  }

  @inlinable var itemCount: Int {
    if let madeTree { return madeTree.itemCount }
    if let madeFlat { return madeFlat.itemOffsets[madeFlat.itemOffsets.count - 1] }
    return sections.reduce(0) { $0 + $1.items.count }
  }

  @inlinable var sectionCount: Int { madeTree?.sectionCount ?? sections.count }

  @inlinable func itemCount(inSection index: Int) -> Int {
    if let madeTree { return madeTree.itemCount(inSection: index) }
    return sections[index].items.count
  }

  @inlinable var sectionIDs: [Section.ID] {
    if let madeTree { return madeTree.entries.map { $0.header.id } }
    return sections.map { $0.id }
  }

  @inlinable func itemIDs(inSection index: Int) -> [Item.ID] {
    // Closures, not key paths: a key path projection costs a call through the key path per element.
    if let madeTree { return madeTree.entries[index].items.map { $0.value.id } }
    return sections[index].items.map { $0.id }
  }

  @inlinable func index(ofSection id: Section.ID) -> Int? {
    if let madeTree { return madeTree.sectionIndexByID[id] }
    return flat.sectionIndexByID[id]
  }

  @inlinable func position(ofItem id: Item.ID) -> ItemPosition? {
    if let madeTree { return madeTree.position(ofItem: id) }
    return flat.positionByItemID[id]?.position
  }

  @inlinable func contains(item id: Item.ID) -> Bool {
    if let madeTree { return madeTree.contains(item: id) }
    return flat.positionByItemID[id] != nil
  }

  @inlinable func section(at index: Int) -> Section {
    if let madeTree { return madeTree.section(at: index) }
    return sections[index]
  }

  @inlinable func item(at position: ItemPosition) -> Item {
    if let madeTree { return madeTree.item(at: position) }
    return sections[position.section].items[position.item]
  }
}

extension Snapshot: Equatable where Section: Equatable {
  /// Two snapshots are equal when their sections are equal.
  /// - Complexity: O(1) for copies of one snapshot; otherwise O(*n*), and see ``sections``.
  @inlinable public static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
    lhs.storage === rhs.storage || lhs.sections == rhs.sections
  }
}

extension Snapshot: CustomStringConvertible {
  /// The section ids, each with its item ids: `[A: 1 2 | B: 3]`.
  @inlinable public var description: String {
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
