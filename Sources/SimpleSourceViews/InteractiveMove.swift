// A move the user made in a view by dragging, recorded by ids so it lands right however the data changed since.

public import SimpleSourceCore

/// A move the user made in a view (interactive reordering), as the view showed the data when it happened.
///
/// The view reports index paths, but by the time the move reaches the data source other tasks may have
/// changed the data, so those index paths can point at other items. The move is therefore kept by ids:
/// the item, its destination section, and its neighbours there. ``resolve(in:)-(Snapshot<Section>)`` finds the destination
/// again in any state of the data:
/// - after ``predecessor`` if it is still in the destination section;
/// - otherwise before ``successor`` if it is;
/// - otherwise at the same index, clamped to the section's end.
public struct InteractiveMove<Section: SectionType>: Sendable, Hashable {
  /// The item type.
  public typealias Item = Section.Item

  /// The item that was moved.
  public let itemID: Item.ID
  /// Where the view showed it before the move.
  public let source: ItemPosition
  /// Where the view shows it after the move.
  public let destination: ItemPosition
  /// The section it was moved into.
  public let destinationSectionID: Section.ID
  /// The item just before it at its destination, if any.
  public let predecessor: Item.ID?
  /// The item just after it at its destination, if any.
  public let successor: Item.ID?

  /// Records a move as the view reports it: `source` in `sections`, and `destination` in the list after
  /// the move, as `UITableView` and `UICollectionView` report interactive moves.
  ///
  /// - Throws: ``DataSourceErrorCode/sectionIndexOutOfRange`` or
  ///   ``DataSourceErrorCode/itemIndexOutOfRange`` naming the bad index.
  package init(
    in sections: [Section], from source: ItemPosition, to destination: ItemPosition
  ) throws(DataSourceError<Section.ID, Item.ID>) {
    guard sections.indices.contains(source.section) else { throw .sectionOutOfRange(source.section) }
    guard sections[source.section].items.indices.contains(source.item) else { throw .itemOutOfRange(source) }
    guard sections.indices.contains(destination.section) else {
      throw .sectionOutOfRange(destination.section)
    }
    var destinationItems = sections[destination.section].items
    let item = sections[source.section].items[source.item]
    if source.section == destination.section { destinationItems.remove(at: source.item) }
    guard (0...destinationItems.count).contains(destination.item) else { throw .itemOutOfRange(destination) }
    itemID = item.id
    self.source = source
    self.destination = destination
    destinationSectionID = sections[destination.section].id
    predecessor = destination.item > 0 ? destinationItems[destination.item - 1].id : nil
    successor = destination.item < destinationItems.count ? destinationItems[destination.item].id : nil
  }

  /// Where the move takes the item in `sections`, which may differ from the data the view showed.
  ///
  /// - Returns: The item's current position, and its destination in the list after the move (the
  ///   coordinates of ``BasicDataSource/moveItem(at:to:)``).
  /// - Throws: ``DataSourceErrorCode/unknownItemID`` if the item is gone,
  ///   ``DataSourceErrorCode/unknownSectionID`` if the destination section is gone.
  /// - Complexity: O(*n*) in the number of items.
  public func resolve(in sections: [Section]) throws(DataSourceError<Section.ID, Item.ID>)
    -> (source: ItemPosition, destination: ItemPosition)
  {
    var current: ItemPosition?
    var section: Int?
    var positions: [Item.ID: ItemPosition] = [:]
    for (sectionIndex, candidate) in sections.enumerated() {
      if candidate.id == destinationSectionID { section = sectionIndex }
      for (offset, item) in candidate.items.enumerated()
      where item.id == itemID || item.id == predecessor || item.id == successor {
        positions[item.id] = ItemPosition(section: sectionIndex, item: offset)
      }
    }
    current = positions[itemID]
    return try place(from: current, inSection: section, itemCount: section.map { sections[$0].items.count }) {
      positions[$0]
    }
  }

  /// Where the move takes the item in `snapshot`: as ``resolve(in:)-([Section])``, with the snapshot's
  /// lookups instead of a scan.
  /// - Complexity: O(1).
  public func resolve(in snapshot: Snapshot<Section>) throws(DataSourceError<Section.ID, Item.ID>)
    -> (source: ItemPosition, destination: ItemPosition)
  {
    let section = snapshot.index(ofSection: destinationSectionID)
    return try place(
      from: snapshot.position(ofItem: itemID), inSection: section,
      itemCount: section.map(snapshot.itemCount(inSection:)), position: snapshot.position(ofItem:))
  }

  /// The destination: after the predecessor if it is in the section, else before the successor, else at
  /// the index, clamped; positions are looked up with `position`.
  func place(
    from current: ItemPosition?, inSection section: Int?, itemCount: Int?,
    position: (Item.ID) -> ItemPosition?
  ) throws(DataSourceError<Section.ID, Item.ID>) -> (source: ItemPosition, destination: ItemPosition) {
    guard let current else { throw .unknownItem(itemID) }
    guard let section, let itemCount else { throw .unknownSection(destinationSectionID) }
    let remaining = itemCount - (current.section == section ? 1 : 0)
    /// A neighbour's index once the item has left its place, if the neighbour is in the section.
    func offset(of neighbour: Item.ID?) -> Int? {
      guard let neighbour, neighbour != itemID, let found = position(neighbour), found.section == section
      else {
        return nil
      }
      return found.item - (current.section == section && current.item < found.item ? 1 : 0)
    }
    let index =
      offset(of: predecessor).map { $0 + 1 } ?? offset(of: successor) ?? min(destination.item, remaining)
    return (current, ItemPosition(section: section, item: index))
  }

  /// Applies the move to `sections` as ``resolve(in:)-(Snapshot<Section>)`` places it.
  /// - Throws: What ``resolve(in:)-(Snapshot<Section>)`` throws; `sections` is then unchanged.
  public func apply(to sections: inout [Section]) throws(DataSourceError<Section.ID, Item.ID>) {
    let (from, to) = try resolve(in: sections)
    let item = sections[from.section].items.remove(at: from.item)
    sections[to.section].items.insert(item, at: to.item)
  }
}
