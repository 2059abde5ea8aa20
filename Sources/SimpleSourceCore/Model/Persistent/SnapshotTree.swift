// The persistent form of a snapshot: sections whose items are B-trees, and a hash trie from item ids to labels.

/// Where an item is: the key of its section and its order label there.
@usableFromInline struct ItemLocation: Sendable, Equatable {
  /// The key of the item's section (see ``SnapshotTree/SectionEntry/key``), stable while sections move.
  @usableFromInline var section: UInt32
  /// The item's label in its section's list; labels increase along the list.
  @usableFromInline var label: UInt64

  @inlinable init(section: UInt32, label: UInt64) {
    self.section = section
    self.label = label
  }
}

/// Sections of items in a form where a new version made by *k* edits costs O(*k* log *n*) and shares the
/// rest with the version it was made from.
///
/// Each section's items are a ``PersistentList`` of labelled items, and ``locations`` maps every item id
/// to its section's key and its label. Labels increase along each section's list and an edit elsewhere
/// never changes them, so an item's position is its section's index and the rank of its label: O(log *n*)
/// with no index to shift. An insert between two labels that leave no room relabels the smallest aligned
/// label range around it that is sparse enough (an order-maintenance list, after Bender et al., *Two
/// simplified algorithms for maintaining order in a list*): amortised O(log *n*) relabels.
///
/// Section edits rebuild the small section indexes, O(*s*) for *s* sections; item edits copy the array of
/// section entries (O(*s*) words) and one path of each structure.
///
/// The tree trusts its caller: positions are in range and ids are new or present as the edit needs.
/// ``SectionStore`` validates every edit before it makes it.
@usableFromInline
struct SnapshotTree<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item

  /// A section: its own content, a stable key, and its items.
  @usableFromInline struct SectionEntry: Sendable {
    /// The section with no items: its id and its own content (header, footer).
    @usableFromInline var header: Section
    /// The section's key in ``ItemLocation``: unique in this tree, kept when the section moves.
    @usableFromInline var key: UInt32
    /// The items, labelled.
    @usableFromInline var items: PersistentList<Labeled<Item>>

    @inlinable init(header: Section, key: UInt32, items: PersistentList<Labeled<Item>>) {
      self.header = header
      self.key = key
      self.items = items
    }
  }

  /// The sections, in order.
  @usableFromInline var entries: [SectionEntry] = []
  /// The index of each section by id.
  @usableFromInline var sectionIndexByID: [Section.ID: Int] = [:]
  /// The index of each section by key.
  @usableFromInline var sectionIndexByKey: [UInt32: Int] = [:]
  /// Where each item is.
  @usableFromInline var locations = PersistentDictionary<Item.ID, ItemLocation>()
  /// The key the next new section gets.
  @usableFromInline var nextKey: UInt32 = 0
  /// The number of items in all sections.
  @usableFromInline var itemCount = 0

  /// Distance between the labels of a bulk-built list, and between an appended item and the last one.
  @inlinable static var spacing: UInt64 { 1 << 32 }
  /// Labels are in `1..<labelLimit`.
  @inlinable static var labelLimit: UInt64 { 1 << 63 }

  /// An empty tree.
  @inlinable init() {}

  /// A tree of `sections`, which are known to be valid.
  /// - Complexity: O(*n*): one hash insertion per item.
  @inlinable init(trusted sections: [Section]) {
    entries.reserveCapacity(sections.count)
    for section in sections { entries.append(makeEntry(section)) }
    reindexSections()
  }

  /// A new entry for `section`, its items labelled `spacing` apart and recorded in ``locations``.
  @inlinable mutating func makeEntry(_ section: Section) -> SectionEntry {
    precondition(section.items.count < Int(Self.labelLimit / Self.spacing), "too many items in one section")
    let key = nextKey
    nextKey += 1
    var labelled: [Labeled<Item>] = []
    labelled.reserveCapacity(section.items.count)
    for (index, item) in section.items.enumerated() {
      let label = UInt64(index + 1) * Self.spacing
      labelled.append(Labeled(orderLabel: label, value: item))
      locations.updateValue(ItemLocation(section: key, label: label), forKey: item.id)
    }
    itemCount += labelled.count
    var header = section
    header.items = []
    return SectionEntry(header: header, key: key, items: PersistentList(labelled))
  }

  @inlinable mutating func reindexSections() {
    sectionIndexByID = Dictionary(minimumCapacity: entries.count)
    sectionIndexByKey = Dictionary(minimumCapacity: entries.count)
    for (index, entry) in entries.enumerated() {
      sectionIndexByID[entry.header.id] = index
      sectionIndexByKey[entry.key] = index
    }
  }

  // MARK: - Reading

  /// The number of sections.
  @inlinable var sectionCount: Int { entries.count }

  /// The section at `index` with its items.
  /// - Complexity: O(size of the section).
  @inlinable func section(at index: Int) -> Section {
    var section = entries[index].header
    section.items = entries[index].items.elements.map(\.value)
    return section
  }

  /// Every section with its items.
  /// - Complexity: O(*n*).
  @inlinable var sections: [Section] { entries.indices.map(section(at:)) }

  /// The item at `position`.
  /// - Complexity: O(log *n*).
  @inlinable func item(at position: ItemPosition) -> Item {
    entries[position.section].items[position.item].value
  }

  /// The number of items in the section at `index`.
  @inlinable func itemCount(inSection index: Int) -> Int { entries[index].items.count }

  /// The position of the item `id`, or `nil`.
  /// - Complexity: O(log *n*): one hash, one descent.
  @inlinable func position(ofItem id: Item.ID) -> ItemPosition? {
    guard let location = locations[id], let section = sectionIndexByKey[location.section] else { return nil }
    return ItemPosition(section: section, item: entries[section].items.rank(ofLabel: location.label))
  }

  /// The position of the item `id` and the item, or `nil`.
  /// - Complexity: O(log *n*): one hash, one descent.
  @inlinable func locate(_ id: Item.ID) -> (position: ItemPosition, item: Item)? {
    locate(id) { $0.find(label: $1) }
  }

  /// ``locate(_:)`` through ``PersistentList/retainingDescend(toLabel:)``, slower on purpose: the
  /// log-derived diff's lookup (see there why).
  /// - Complexity: O(log *n*).
  @inlinable func locateRetaining(_ id: Item.ID) -> (position: ItemPosition, item: Item)? {
    locate(id) { $0.findRetaining(label: $1) }
  }

  /// ``locate(_:)`` with `find` as the descent.
  @inlinable func locate(
    _ id: Item.ID, by find: (PersistentList<Labeled<Item>>, UInt64) -> (index: Int, element: Labeled<Item>)
  ) -> (position: ItemPosition, item: Item)? {
    guard let location = locations[id], let section = sectionIndexByKey[location.section] else { return nil }
    let (rank, element) = find(entries[section].items, location.label)
    return (ItemPosition(section: section, item: rank), element.value)
  }

  /// Whether an item `id` exists.
  @inlinable func contains(item id: Item.ID) -> Bool { locations[id] != nil }

  // MARK: - Item edits

  /// Replaces the item at `position` with `item`, which has the same id.
  /// - Complexity: O(log *n*).
  @inlinable mutating func replaceItem(at position: ItemPosition, with item: Item) {
    entries[position.section].items.modify(at: position.item) { $0.value = item }
  }

  /// Inserts `item`, whose id is new, at `position`.
  /// - Complexity: O(log *n*) amortised.
  @inlinable mutating func insertItem(_ item: Item, at position: ItemPosition) {
    let label = makeRoom(at: position)
    entries[position.section].items.insert(Labeled(orderLabel: label, value: item), at: position.item)
    locations.updateValue(ItemLocation(section: entries[position.section].key, label: label), forKey: item.id)
    itemCount += 1
  }

  /// Removes and returns the item at `position`.
  /// - Complexity: O(log *n*).
  @discardableResult
  @inlinable mutating func removeItem(at position: ItemPosition) -> Item {
    let item = entries[position.section].items.remove(at: position.item).value
    locations.removeValue(forKey: item.id)
    itemCount -= 1
    return item
  }

  /// A free label for an item inserted at `position`, relabelling a range around it when its neighbours'
  /// labels leave no room.
  @inlinable mutating func makeRoom(at position: ItemPosition) -> UInt64 {
    if let label = freeLabel(at: position) { return label }
    relabel(around: position)
    guard let label = freeLabel(at: position) else {
      preconditionFailure("SimpleSource internal inconsistency: relabelling left no room")
    }
    return label
  }

  /// A label between the neighbours of `position`: `spacing` after the last item for an append when there
  /// is room, else the midpoint; `nil` when the neighbours are adjacent.
  @inlinable func freeLabel(at position: ItemPosition) -> UInt64? {
    let items = entries[position.section].items
    // At the end, the label before is the list's last, which its root keeps: no descent.
    let low =
      position.item == 0
      ? 0 : position.item == items.count ? items.lastLabel : items[position.item - 1].orderLabel
    let high = position.item < items.count ? items[position.item].orderLabel : Self.labelLimit
    if high - low < 2 { return nil }
    if position.item == items.count && high - low > Self.spacing { return low + Self.spacing }
    return low + (high - low) / 2
  }

  /// Spreads the labels of the smallest aligned range around the insertion point whose density is below
  /// its threshold (`(2 / 1.3)^j` items for a range of 2^j labels) evenly over that range.
  @inlinable mutating func relabel(around position: ItemPosition) {
    let items = entries[position.section].items
    let anchor = position.item > 0 ? items[position.item - 1].orderLabel : 0
    var allowed = 1.0
    for bits in 1...63 {
      allowed *= 2 / 1.3
      let size = UInt64(1) << UInt64(bits)
      let base = anchor & ~(size - 1)
      let first = items.rank(ofLabel: base)
      let end = items.rank(ofLabel: base + size)
      let count = end - first
      // Room for one more, at least two labels apart.
      guard Double(count + 1) <= allowed, size / UInt64(count + 1) >= 2 else { continue }
      let step = size / UInt64(count + 1)
      let key = entries[position.section].key
      for offset in 0..<count {
        var element = entries[position.section].items[first + offset]
        element.orderLabel = base + UInt64(offset + 1) * step
        entries[position.section].items[first + offset] = element
        locations.updateValue(ItemLocation(section: key, label: element.orderLabel), forKey: element.value.id)
      }
      return
    }
    preconditionFailure("SimpleSource internal inconsistency: no label range to relabel")
  }

  // MARK: - Section edits

  /// Inserts `sections`, whose ids and items' ids are new, at `index`.
  /// - Complexity: O(*s*) plus one hash per new item.
  @inlinable mutating func insertSections(_ sections: [Section], at index: Int) {
    var new: [SectionEntry] = []
    for section in sections { new.append(makeEntry(section)) }
    entries.insert(contentsOf: new, at: index)
    reindexSections()
  }

  /// Removes the section at `index` and returns it with its items.
  /// - Complexity: O(*s*) plus O(log *n*) per item of the section.
  @discardableResult
  @inlinable mutating func removeSection(at index: Int) -> Section {
    let removed = section(at: index)
    for item in removed.items { locations.removeValue(forKey: item.id) }
    itemCount -= removed.items.count
    entries.remove(at: index)
    reindexSections()
    return removed
  }

  /// Moves the section at `source` so that it ends at `destination`.
  /// - Complexity: O(*s*).
  @inlinable mutating func moveSection(from source: Int, to destination: Int) {
    entries.insert(entries.remove(at: source), at: destination)
    reindexSections()
  }

  /// Replaces the own content of the section at `index` with that of `section` (its items are ignored).
  @inlinable mutating func replaceSectionContent(at index: Int, with section: Section) {
    var header = section
    header.items = []
    entries[index].header = header
  }
}

extension SnapshotTree {
  /// Whether both trees hold the same sections (ids and own content) with equal items in the same order.
  /// - Complexity: O(*s* + *k* log *n*) for versions made from each other by *k* edits (shared subtrees
  ///   are skipped); O(*n*) at worst.
  @inlinable func hasSameContent(as other: SnapshotTree) -> Bool {
    guard entries.count == other.entries.count, itemCount == other.itemCount else { return false }
    for (left, right) in zip(entries, other.entries) {
      guard left.header.id == right.header.id, left.header.isContentEqual(to: right.header),
        left.items.elementsEqual(right.items, by: { $0.value == $1.value })
      else { return false }
    }
    return true
  }
}

extension SnapshotTree {
  /// The tree's invariants, for tests; empty when all hold: each section's list is a valid B-tree with
  /// increasing labels, every item's location names its section and label, and the counts add up.
  @inlinable var violations: [String] {
    var found: [String] = []
    var total = 0
    for (index, entry) in entries.enumerated() {
      found += entry.items.violations.map { "section \(index): \($0)" }
      var previous: UInt64 = 0
      for (offset, element) in entry.items.enumerated() {
        if element.orderLabel <= previous || element.orderLabel >= Self.labelLimit {
          found.append("section \(index): label \(element.orderLabel) at \(offset) after \(previous)")
        }
        previous = element.orderLabel
        if locations[element.value.id] != ItemLocation(section: entry.key, label: element.orderLabel) {
          found.append("section \(index): item \(element.value.id) at \(offset) has a wrong location")
        }
      }
      total += entry.items.count
      if sectionIndexByID[entry.header.id] != index || sectionIndexByKey[entry.key] != index {
        found.append("section \(index) is indexed wrongly")
      }
      if !entry.header.items.isEmpty { found.append("section \(index)'s header holds items") }
    }
    if total != itemCount || locations.count != itemCount {
      found.append("counts: \(total) items, itemCount \(itemCount), \(locations.count) locations")
    }
    if sectionIndexByID.count != entries.count { found.append("section ids index \(sectionIndexByID.count)") }
    return found
  }
}
