// A copy of a source kept outside it as storage keeps one: items in a dictionary, the order by neighbours;
// it follows each batch through its edits by id.

public import SimpleSource

/// A copy of a data source's state kept as a service keeps one outside the package: items and section
/// headers in dictionaries, the order as links between neighbours. It follows batches through
/// `UpdateBatch.edits`, each edit in O(1), so a batch costs what it changed, never the whole list.
///
/// ```swift
/// var copy = KeyedCopy(subscription.snapshot)
/// for await batch in subscription.batches {
///   try copy.apply(batch.edits)
/// }
/// ```
///
/// It is the reference for storage of your own (a table with an order column works the same way, with an
/// order key between its neighbours' instead of links), and what tests compare with a snapshot.
public struct KeyedCopy<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item

  /// An item and its neighbours in its section.
  @usableFromInline struct ItemEntry: Sendable {
    @usableFromInline var item: Item
    @usableFromInline var section: Section.ID
    @usableFromInline var previous: Item.ID?
    @usableFromInline var next: Item.ID?

    @inlinable init(item: Item, section: Section.ID, previous: Item.ID?, next: Item.ID?) {
      (self.item, self.section, self.previous, self.next) = (item, section, previous, next)
    }
  }

  /// A section's own content, its first and last items, and its neighbours.
  @usableFromInline struct SectionEntry: Sendable {
    @usableFromInline var header: Section
    @usableFromInline var first: Item.ID?
    @usableFromInline var last: Item.ID?
    @usableFromInline var previous: Section.ID?
    @usableFromInline var next: Section.ID?

    @inlinable init(
      header: Section, first: Item.ID?, last: Item.ID?, previous: Section.ID?, next: Section.ID?
    ) {
      (self.header, self.first, self.last, self.previous, self.next) = (header, first, last, previous, next)
    }
  }

  @usableFromInline var items: [Item.ID: ItemEntry] = [:]
  @usableFromInline var sectionEntries: [Section.ID: SectionEntry] = [:]
  @usableFromInline var firstSection: Section.ID?
  @usableFromInline var lastSection: Section.ID?

  /// A copy of `snapshot`.
  /// - Complexity: O(*n*).
  @inlinable public init(_ snapshot: Snapshot<Section>) {
    for section in snapshot.sections {
      var header = section
      header.items = []
      linkSection(header, after: lastSection)
      var previous: Item.ID?
      for item in section.items {
        linkItem(item, in: section.id, after: previous)
        previous = item.id
      }
    }
  }

  /// The item with `id`.
  /// - Complexity: O(1).
  @inlinable public func item(withID id: Section.Item.ID) -> Section.Item? { items[id]?.item }

  /// The sections with their items, in order, read by walking the links.
  /// - Complexity: O(*n*).
  public var sections: [Section] {
    var result: [Section] = []
    var sectionID = firstSection
    while let id = sectionID, let entry = sectionEntries[id] {
      var section = entry.header
      var itemID = entry.first
      while let current = itemID, let item = items[current] {
        section.items.append(item.item)
        itemID = item.next
      }
      result.append(section)
      sectionID = entry.next
    }
    return result
  }

  /// An edit that does not fit the copy: it names an id the copy does not hold, or one it holds already.
  public struct Mismatch: Error, CustomStringConvertible {
    /// The edit and why it does not fit: `KeyedCopy: insert 7 after 3: 7 is held already`.
    public var description: String

    @usableFromInline init(description: String) { self.description = description }
  }

  /// Applies `edits` in order.
  /// - Throws: ``Mismatch`` for an edit that does not fit; the edits before it stay applied.
  /// - Complexity: O(1) per edit.
  @inlinable public mutating func apply(_ edits: [BatchEdit<Section>]) throws(Mismatch) {
    for edit in edits { try apply(edit) }
  }

  /// Applies one edit.
  /// - Throws: ``Mismatch`` for an edit that does not fit; nothing changes then.
  /// - Complexity: O(1).
  @inlinable public mutating func apply(_ edit: BatchEdit<Section>) throws(Mismatch) {
    func mismatch(_ why: String) -> Mismatch {
      Mismatch(description: "KeyedCopy: \(edit): \(why)")
    }
    switch edit {
    case .deleteItem(let id):
      guard items[id] != nil else { throw mismatch("\(id) is not held") }
      unlinkItem(id)
    case .insertSection(let header, let after):
      guard sectionEntries[header.id] == nil else { throw mismatch("section \(header.id) is held already") }
      guard after.map({ sectionEntries[$0] != nil }) ?? true else { throw mismatch("no section to follow") }
      linkSection(header, after: after)
    case .moveSection(let id, let after):
      guard let entry = sectionEntries[id], after.map({ sectionEntries[$0] != nil && $0 != id }) ?? true
      else {
        throw mismatch("no such sections")
      }
      unlinkSection(id)
      linkSection(entry.header, after: after, keeping: entry)
    case .updateSection(let header):
      guard sectionEntries[header.id] != nil else { throw mismatch("section \(header.id) is not held") }
      sectionEntries[header.id]?.header = header
    case .insertItem(let item, let place):
      guard items[item.id] == nil else { throw mismatch("\(item.id) is held already") }
      guard let section = section(of: place) else { throw mismatch("no such place") }
      linkItem(item, in: section, after: anchor(of: place))
    case .moveItem(let id, let place):
      guard let entry = items[id], let section = section(of: place), anchor(of: place) != id else {
        throw mismatch("no such item or place")
      }
      unlinkItem(id)
      linkItem(entry.item, in: section, after: anchor(of: place))
    case .updateItem(let item):
      guard items[item.id] != nil else { throw mismatch("\(item.id) is not held") }
      items[item.id]?.item = item
    case .deleteSection(let id):
      guard let entry = sectionEntries[id] else { throw mismatch("section \(id) is not held") }
      guard entry.first == nil else { throw mismatch("section \(id) still holds items") }
      unlinkSection(id)
      sectionEntries[id] = nil
    }
  }

  /// The section a place is in, when the copy holds it.
  @inlinable func section(of place: ItemPlace<Section.ID, Item.ID>) -> Section.ID? {
    switch place {
    case .after(let id): items[id]?.section
    case .first(let section): sectionEntries[section] == nil ? nil : section
    }
  }

  /// The item a place follows.
  @inlinable func anchor(of place: ItemPlace<Section.ID, Item.ID>) -> Item.ID? {
    if case .after(let id) = place { id } else { nil }
  }

  @inlinable mutating func linkItem(_ item: Item, in section: Section.ID, after previous: Item.ID?) {
    let next = previous.map { items[$0]?.next } ?? sectionEntries[section]?.first
    items[item.id] = ItemEntry(item: item, section: section, previous: previous, next: next)
    if let previous { items[previous]?.next = item.id } else { sectionEntries[section]?.first = item.id }
    if let next { items[next]?.previous = item.id } else { sectionEntries[section]?.last = item.id }
  }

  @inlinable mutating func unlinkItem(_ id: Item.ID) {
    guard let entry = items.removeValue(forKey: id) else { return }
    if let previous = entry.previous {
      items[previous]?.next = entry.next
    } else {
      sectionEntries[entry.section]?.first = entry.next
    }
    if let next = entry.next {
      items[next]?.previous = entry.previous
    } else {
      sectionEntries[entry.section]?.last = entry.previous
    }
  }

  @inlinable mutating func linkSection(
    _ header: Section, after previous: Section.ID?, keeping entry: SectionEntry? = nil
  ) {
    let next = previous.map { sectionEntries[$0]?.next } ?? firstSection
    var linked = entry ?? SectionEntry(header: header, first: nil, last: nil, previous: nil, next: nil)
    (linked.previous, linked.next) = (previous, next)
    sectionEntries[header.id] = linked
    if let previous { sectionEntries[previous]?.next = header.id } else { firstSection = header.id }
    if let next { sectionEntries[next]?.previous = header.id } else { lastSection = header.id }
  }

  @inlinable mutating func unlinkSection(_ id: Section.ID) {
    guard let entry = sectionEntries[id] else { return }
    if let previous = entry.previous {
      sectionEntries[previous]?.next = entry.next
    } else {
      firstSection = entry.next
    }
    if let next = entry.next {
      sectionEntries[next]?.previous = entry.previous
    } else {
      lastSection = entry.previous
    }
    sectionEntries[id]?.previous = nil
    sectionEntries[id]?.next = nil
  }
}
