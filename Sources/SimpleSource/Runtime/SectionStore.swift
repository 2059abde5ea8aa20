// The editable state of a data source: sections plus an incremental id index, edited atomically.

/// Sections and an id index that single-item edits keep up to date, so a mutation never rebuilds a
/// whole ``Snapshot``.
///
/// Each item's location (its section's id and its index there) is cached. Appends and replacements
/// keep the cache exact; an edit that shifts indices inside a section (a delete, a move, an insert in
/// the middle) marks only that section stale, and its next lookup re-indexes it. So lookups are O(1)
/// for append-and-update workloads and O(section size) at worst.
///
/// Every edit validates all its input before it changes anything, so a thrown error leaves the store
/// exactly as it was (G8). Every edit returns whether it changed anything (G4).
@usableFromInline
struct SectionStore<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item
  @usableFromInline typealias Error = DataSourceError<Section.ID, Item.ID>

  /// Where an item is: its section's id, and its index there unless the section is stale.
  @usableFromInline
  struct Location: Sendable {
    @usableFromInline var section: Section.ID
    @usableFromInline var index: Int
    @inlinable init(section: Section.ID, index: Int) {
      self.section = section
      self.index = index
    }
  }

  @usableFromInline var sections: [Section]
  @usableFromInline var sectionIndex: [Section.ID: Int]
  @usableFromInline var itemLocation: [Item.ID: Location]
  /// Sections whose item indices in ``itemLocation`` may be out of date.
  @usableFromInline var staleSections: Set<Section.ID> = []

  /// The store and snapshot that replace `current` with `sections`, validated; `nil` when they are equal.
  @inlinable
  static func replacing(_ current: [Section], with sections: [Section]) throws(Error)
    -> (store: Self, snapshot: Snapshot<Section>)?
  {
    let snapshot = try Snapshot(sections)
    if same(current, sections) { return nil }
    return (Self(trusted: snapshot), snapshot)
  }

  @inlinable
  init(trusted snapshot: Snapshot<Section>) {
    sections = snapshot.sections
    sectionIndex = [:]
    sectionIndex.reserveCapacity(sections.count)
    itemLocation = [:]
    itemLocation.reserveCapacity(snapshot.itemCount)
    for (index, section) in sections.enumerated() {
      sectionIndex[section.id] = index
      for (itemIndex, item) in section.items.enumerated() {
        itemLocation[item.id] = Location(section: section.id, index: itemIndex)
      }
    }
  }

  // MARK: - Lookups

  @inlinable
  func index(ofSection id: Section.ID) throws(Error) -> Int {
    guard let index = sectionIndex[id] else { throw .unknownSection(id) }
    return index
  }

  /// The item's position; re-indexes its section first if it is stale.
  @inlinable
  mutating func position(ofItem id: Item.ID) throws(Error) -> ItemPosition {
    guard let location = itemLocation[id], let section = sectionIndex[location.section] else {
      throw .unknownItem(id)
    }
    if staleSections.remove(location.section) != nil {
      for (index, item) in sections[section].items.enumerated() {
        itemLocation[item.id] = Location(section: location.section, index: index)
      }
      return try position(ofItem: id)
    }
    return ItemPosition(section: section, item: location.index)
  }

  /// The position of an existing item, without re-indexing (for error reports).
  @inlinable
  func currentPosition(ofItem id: Item.ID) -> ItemPosition? {
    guard let location = itemLocation[id], let section = sectionIndex[location.section] else { return nil }
    if !staleSections.contains(location.section) {
      return ItemPosition(section: section, item: location.index)
    }
    return sections[section].items.firstIndex { $0.id == id }.map { ItemPosition(section: section, item: $0) }
  }

  @inlinable
  mutating func markStale(_ section: Int) { staleSections.insert(sections[section].id) }

  /// Rejects `items` if an id repeats among them or already exists.
  /// `firstPosition` is where the first new item would land, for the error.
  @inlinable
  func checkNew(_ items: [Item], at firstPosition: ItemPosition) throws(Error) {
    var seen = [Item.ID: Int]()
    for (offset, item) in items.enumerated() {
      let landing = ItemPosition(section: firstPosition.section, item: firstPosition.item + offset)
      if let earlier = seen.updateValue(offset, forKey: item.id) {
        throw .duplicateItem(
          item.id, first: ItemPosition(section: firstPosition.section, item: firstPosition.item + earlier),
          second: landing)
      }
      if let existing = currentPosition(ofItem: item.id) {
        // Where the existing item would stand once the new items were inserted before or after it.
        let shift =
          existing.section == firstPosition.section && existing.item >= firstPosition.item ? items.count : 0
        let shifted = ItemPosition(section: existing.section, item: existing.item + shift)
        throw .duplicateItem(item.id, first: shifted, second: landing)
      }
    }
  }

  // MARK: - Whole state

  /// Whether two lists are equal: same ids in the same order, same section content, same items.
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

  // MARK: - Sections

  /// Inserts sections at `index` (0...count). Their ids and their items' ids must be new.
  @inlinable
  mutating func insertSections(_ newSections: [Section], at index: Int) throws(Error) -> Bool {
    guard (0...sections.count).contains(index) else { throw .sectionOutOfRange(index) }
    var seenSections = [Section.ID: Int]()
    var seenItems = [Item.ID: ItemPosition]()
    for (offset, section) in newSections.enumerated() {
      if let earlier = seenSections.updateValue(index + offset, forKey: section.id) {
        throw .duplicateSection(section.id, first: earlier, second: index + offset)
      }
      // Existing sections at or after `index` would stand `newSections.count` further on.
      if let existing = sectionIndex[section.id] {
        let shifted = existing >= index ? existing + newSections.count : existing
        throw .duplicateSection(section.id, first: shifted, second: index + offset)
      }
      for (itemOffset, item) in section.items.enumerated() {
        let landing = ItemPosition(section: index + offset, item: itemOffset)
        if let earlier = seenItems.updateValue(landing, forKey: item.id) {
          throw .duplicateItem(item.id, first: earlier, second: landing)
        }
        if let existing = currentPosition(ofItem: item.id) {
          let shift = existing.section >= index ? newSections.count : 0
          let shifted = ItemPosition(section: existing.section + shift, item: existing.item)
          throw .duplicateItem(item.id, first: shifted, second: landing)
        }
      }
    }
    if newSections.isEmpty { return false }
    sections.insert(contentsOf: newSections, at: index)
    for section in newSections {
      for (itemIndex, item) in section.items.enumerated() {
        itemLocation[item.id] = Location(section: section.id, index: itemIndex)
      }
    }
    reindexSections(from: index)
    return true
  }

  @inlinable
  mutating func deleteSections(_ ids: [Section.ID]) throws(Error) -> Bool {
    var indices = Set<Int>()
    for id in ids { indices.insert(try index(ofSection: id)) }
    if indices.isEmpty { return false }
    for index in indices.sorted(by: >) {
      let section = sections.remove(at: index)
      sectionIndex[section.id] = nil
      staleSections.remove(section.id)
      for item in section.items { itemLocation[item.id] = nil }
    }
    reindexSections(from: indices.min() ?? 0)
    return true
  }

  /// Moves a section so that it ends at `destination` (an index in the final list).
  @inlinable
  mutating func moveSection(_ id: Section.ID, to destination: Int) throws(Error) -> Bool {
    let source = try index(ofSection: id)
    guard sections.indices.contains(destination) else { throw .sectionOutOfRange(destination) }
    if source == destination { return false }
    sections.insert(sections.remove(at: source), at: destination)
    reindexSections(from: min(source, destination))
    return true
  }

  /// Moves a section before or after another one.
  @inlinable
  mutating func moveSection(_ id: Section.ID, relativeTo other: Section.ID, after: Bool) throws(Error) -> Bool
  {
    let source = try index(ofSection: id)
    let anchor = try index(ofSection: other)
    if id == other {
      throw Error(code: .moveRelativeToItself, sectionID: id, sectionIndices: [source])
    }
    // The anchor's index once the moved section is out of the way.
    let anchorAfterRemoval = anchor > source ? anchor - 1 : anchor
    return try moveSection(id, to: anchorAfterRemoval + (after ? 1 : 0))
  }

  @inlinable
  mutating func reindexSections(from start: Int) {
    for index in start..<sections.count { sectionIndex[sections[index].id] = index }
  }

  // MARK: - Items

  /// Inserts items at `position` (item in 0...count of that section).
  @inlinable
  mutating func insertItems(_ items: [Item], at position: ItemPosition) throws(Error) -> Bool {
    guard sections.indices.contains(position.section) else { throw .sectionOutOfRange(position.section) }
    guard (0...sections[position.section].items.count).contains(position.item) else {
      throw .itemOutOfRange(position)
    }
    try checkNew(items, at: position)
    if items.isEmpty { return false }
    let isAppend = position.item == sections[position.section].items.count
    sections[position.section].items.insert(contentsOf: items, at: position.item)
    let sectionID = sections[position.section].id
    for (offset, item) in items.enumerated() {
      itemLocation[item.id] = Location(section: sectionID, index: position.item + offset)
    }
    if !isAppend { markStale(position.section) }
    return true
  }

  @inlinable
  mutating func deleteItems(_ ids: [Item.ID]) throws(Error) -> Bool {
    var positions = Set<ItemPosition>()
    for id in ids { positions.insert(try position(ofItem: id)) }
    if positions.isEmpty { return false }
    for position in positions.sorted(by: >) {
      let item = sections[position.section].items.remove(at: position.item)
      itemLocation[item.id] = nil
      markStale(position.section)
    }
    return true
  }

  /// Moves the item at `source` so that it ends at `destination` (a position in the final list), as a
  /// table view's interactive reordering reports it.
  @inlinable
  mutating func moveItem(at source: ItemPosition, to destination: ItemPosition) throws(Error) -> Bool {
    guard sections.indices.contains(source.section) else { throw .sectionOutOfRange(source.section) }
    guard sections[source.section].items.indices.contains(source.item) else { throw .itemOutOfRange(source) }
    guard sections.indices.contains(destination.section) else {
      throw .sectionOutOfRange(destination.section)
    }
    let finalCount =
      sections[destination.section].items.count - (source.section == destination.section ? 1 : 0)
    guard (0...finalCount).contains(destination.item) else { throw .itemOutOfRange(destination) }
    if source == destination { return false }
    let item = sections[source.section].items.remove(at: source.item)
    sections[destination.section].items.insert(item, at: destination.item)
    itemLocation[item.id] = Location(section: sections[destination.section].id, index: destination.item)
    markStale(source.section)
    markStale(destination.section)
    return true
  }

  /// Moves an item before or after another item.
  @inlinable
  mutating func moveItem(_ id: Item.ID, relativeTo other: Item.ID, after: Bool) throws(Error) -> Bool {
    let source = try position(ofItem: id)
    var anchor = try position(ofItem: other)
    if id == other { throw Error(code: .moveRelativeToItself, itemID: id, positions: [source]) }
    if anchor.section == source.section && anchor.item > source.item { anchor.item -= 1 }
    anchor.item += after ? 1 : 0
    return try moveItem(at: source, to: anchor)
  }

  /// Moves an item to the end of a section.
  @inlinable
  mutating func moveItem(_ id: Item.ID, toSection sectionID: Section.ID) throws(Error) -> Bool {
    let source = try position(ofItem: id)
    let section = try index(ofSection: sectionID)
    let end = sections[section].items.count - (section == source.section ? 1 : 0)
    return try moveItem(at: source, to: ItemPosition(section: section, item: end))
  }

  /// Replaces the item with the same id. Returns `false` when the new value is equal.
  @inlinable
  mutating func replaceItem(_ item: Item) throws(Error) -> Bool {
    let position = try position(ofItem: item.id)
    if sections[position.section].items[position.item] == item { return false }
    sections[position.section].items[position.item] = item
    return true
  }

  /// Replaces a section's own content (header, footer), keeping its items. Returns whether it changed.
  @inlinable
  mutating func replaceSectionContent(_ section: Section) throws(Error) -> Bool {
    let index = try index(ofSection: section.id)
    if sections[index].isContentEqual(to: section) { return false }
    var replacement = section
    replacement.items = sections[index].items
    sections[index] = replacement
    return true
  }

  /// The ids among `ids` that exist; throws for the first unknown one.
  @inlinable
  func checkExisting(_ ids: some Sequence<Item.ID>) throws(Error) -> Set<Item.ID> {
    var result = Set<Item.ID>()
    for id in ids {
      guard itemLocation[id] != nil else { throw .unknownItem(id) }
      result.insert(id)
    }
    return result
  }
}
