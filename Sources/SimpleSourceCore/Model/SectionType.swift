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
/// struct Department: SectionType, Equatable {
///   var id: String
///   var manager: String        // shown in the header: a change to it refreshes the section
///   var items: [Employee]
/// }
/// ```
///
/// A section type that is not `Equatable` says what its content is:
///
/// ```swift
/// struct Floor: SectionType {
///   var id: Int
///   var name: String
///   var items: [Room]
///   func isContentEqual(to other: Floor) -> Bool { name == other.name }
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
  /// (its header and footer), and ``BasicDataSource/updateSection(_:)`` stores the new content. When it
  /// returns `true`, the two are the same section as far as the source is concerned: an update that
  /// changes only what this ignores changes nothing (no version, no batch) and is not stored.
  ///
  /// A section that is `Equatable` has it for free: it compares every stored property but ``items``, so
  /// a change to any field of the section (a header, a footer, the members who may see it) is published.
  /// A section that is not `Equatable` declares it: there is no default that could hide a change. Write
  /// your own only to compare less than every field on purpose (a field a reader never sees).
  ///
  /// - Complexity: Called once per surviving section by ``Changeset/init(from:to:refreshing:)``; keep it
  ///   independent of the number of items. The `Equatable` default is O(1) in the items.
  func isContentEqual(to other: Self) -> Bool
}

extension SectionType where Self: Equatable {
  /// Whether the two sections are equal in every stored property but ``items``.
  /// - Complexity: O(1) in the items: both sides are compared with their items left out.
  @inlinable
  public func isContentEqual(to other: Self) -> Bool {
    var (lhs, rhs) = (self, other)
    lhs.items = []
    rhs.items = []
    return lhs == rhs
  }
}
