// The position of an item in a snapshot: a section index and an item index.

public import Foundation

/// The position of an item: the index of its section and its index within that section.
///
/// This is the platform-free counterpart of UIKit's `IndexPath(item:section:)`; ``indexPath`` converts.
public struct ItemPosition: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
  /// The index of the section.
  public var section: Int
  /// The index of the item within its section.
  public var item: Int

  /// Creates a position.
  @inlinable
  public init(section: Int, item: Int) {
    self.section = section
    self.item = item
  }

  /// Creates a position from a two-element index path `[section, item]`.
  ///
  /// - Precondition: `indexPath.count == 2`.
  public init(_ indexPath: IndexPath) {
    precondition(indexPath.count == 2, "ItemPosition needs an index path of two indices, got \(indexPath)")
    self.init(section: indexPath[0], item: indexPath[1])
  }

  /// Creates a position from an index path of two indices, or returns `nil` for any other length (UIKit
  /// passes one-index paths for some supplementary views, such as a layout-wide boundary item).
  public init?(exactly indexPath: IndexPath) {
    guard indexPath.count == 2 else { return nil }
    self.init(section: indexPath[0], item: indexPath[1])
  }

  /// The position as a Foundation index path `[section, item]`, as UIKit expects it.
  public var indexPath: IndexPath { [section, item] }

  /// Orders by section, then by item.
  @inlinable
  public static func < (lhs: ItemPosition, rhs: ItemPosition) -> Bool {
    (lhs.section, lhs.item) < (rhs.section, rhs.item)
  }

  /// `[section, item]`, as `IndexPath` prints.
  public var description: String { "[\(section), \(item)]" }
}
