// The ready-made section type: an id, optional header and footer titles, and items.

/// A ready-made section: an id, optional header and footer titles, and its items.
///
/// The header and footer are the section's own content: changing one of them while the id stays makes
/// a ``Changeset`` refresh the section.
///
/// ```swift
/// let engineering = Section(id: "eng", header: "Engineering", items: [ada, grace])
/// ```
public struct Section<ID: Hashable & Sendable, Item: Identifiable & Equatable & Sendable>: SectionType
where Item.ID: Sendable {
  /// The section's identity.
  public var id: ID
  /// The title shown above the section, if any.
  public var header: String?
  /// The title shown below the section, if any.
  public var footer: String?
  /// The items, in display order.
  public var items: [Item]

  /// Creates a section.
  /// - Parameters:
  ///   - id: The section's identity, unique within a snapshot.
  ///   - header: The title shown above the section.
  ///   - footer: The title shown below the section.
  ///   - items: The items, in display order; their ids must be unique within a snapshot.
  @inlinable
  public init(id: ID, header: String? = nil, footer: String? = nil, items: [Item] = []) {
    self.id = id
    self.header = header
    self.footer = footer
    self.items = items
  }

  /// Whether the header and footer equal those of `other`.
  @inlinable
  public func isContentEqual(to other: Self) -> Bool {
    header == other.header && footer == other.footer
  }
}

extension Section: Equatable {}
extension Section: Hashable where Item: Hashable {}
extension Section: Encodable where ID: Encodable, Item: Encodable {}
extension Section: Decodable where ID: Decodable, Item: Decodable {}
