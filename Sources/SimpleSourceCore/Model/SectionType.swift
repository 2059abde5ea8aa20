// The protocol every section of a snapshot conforms to: an identifiable value holding ordered items.

/// A section of a list: an identifiable value that holds ordered, identifiable items.
///
/// Identity and content are separate. A section is the *same* section across two snapshots when its
/// `id` is equal; its own content (a header title, a footer) may still have changed, which
/// ``isContentEqual(to:)`` reports. Items follow the same split: `Item.id` is identity and `==` is content.
///
/// Use the ready ``Section`` or conform your own type:
///
/// ```swift
/// struct Department: SectionType {
///   var id: String
///   var manager: String        // shown in the header
///   var items: [Employee]
///   func isContentEqual(to other: Department) -> Bool { manager == other.manager }
/// }
/// ```
public protocol SectionType<Item>: Identifiable, Sendable where ID: Sendable {
  /// The type of the items in the section: identity is `id`, content is `==`.
  associatedtype Item: Identifiable & Equatable & Sendable where Item.ID: Sendable

  /// The items of the section, in display order.
  var items: [Item] { get set }

  /// Whether the section's own content (everything but ``items``) equals that of `other`.
  ///
  /// When this returns `false` for two sections with the same id, a ``Changeset`` refreshes the section
  /// (its header and footer). The default implementation returns `true`: a section with no content of
  /// its own never needs a refresh.
  ///
  /// - Complexity: Called once per surviving section by ``Changeset/init(from:to:refreshing:)``; keep it O(1).
  func isContentEqual(to other: Self) -> Bool
}

extension SectionType {
  /// Returns `true`: by default a section has no content of its own beyond its items.
  @inlinable
  public func isContentEqual(to other: Self) -> Bool { true }
}
