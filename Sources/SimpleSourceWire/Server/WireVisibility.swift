// What one scope of a service may see: the sections its rule accepts, and in them the rows its rule
// accepts. The service projects each scope's view with it and hands it to the writer with each edit.

public import SimpleSourceCore

/// What a client of one scope may see of a served source: the sections ``sections`` accepts and, in those,
/// the rows ``rows`` accepts. A row is visible only when its section is.
///
/// A ``WireService`` makes one per edit from its `sections:` and `rows:` rules and gives it to its
/// ``WireWriter``: an edit may name only what its client sees, and write only rows its client would see.
public struct WireVisibility<Section: SectionType>: Sendable {
  /// The item type.
  public typealias Item = Section.Item

  /// Whether a section is visible, read from the section's own content (its id and header; its items may
  /// be missing); `nil`: every section.
  public var sections: (@Sendable (Section) -> Bool)?
  /// Whether a row of a visible section is visible; `nil`: every row.
  public var rows: (@Sendable (Item) -> Bool)?

  /// Creates a visibility.
  /// - Parameters:
  ///   - sections: Whether a section is visible, from its own content; `nil`: every section.
  ///   - rows: Whether a row of a visible section is visible; `nil`: every row.
  public init(sections: (@Sendable (Section) -> Bool)? = nil, rows: (@Sendable (Item) -> Bool)? = nil) {
    self.sections = sections
    self.rows = rows
  }

  /// Whether `item` is visible where it is, in `section`.
  /// - Complexity: O(1) besides the rules.
  @inlinable
  public func allows(_ item: Item, in section: Section) -> Bool {
    (sections?(section) ?? true) && (rows?(item) ?? true)
  }

  /// Whether the item `id` of `snapshot` is visible; `nil` when `snapshot` has no such item.
  /// - Complexity: O(log *n*) besides the rules.
  public func allowsItem(withID id: Item.ID, in snapshot: Snapshot<Section>) -> Bool? {
    guard let position = snapshot.position(ofItem: id) else { return nil }
    return allows(snapshot[position], in: snapshot.sectionContent(at: position.section))
  }

  /// Whether the section `id` of `snapshot` is visible; `nil` when `snapshot` has no such section.
  /// - Complexity: O(1) expected, besides the rule.
  public func allowsSection(withID id: Section.ID, in snapshot: Snapshot<Section>) -> Bool? {
    guard let index = snapshot.index(ofSection: id) else { return nil }
    guard let sections else { return true }
    return sections(snapshot.sectionContent(at: index))
  }
}
