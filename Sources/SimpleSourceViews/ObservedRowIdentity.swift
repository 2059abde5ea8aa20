// What SwiftUI compares of one row view of ObservedRows: the objects it shows and the closures it was
// given, by identity. Platform-free, so that the comparison SwiftUI relies on is tested on Linux.

package import SimpleSourceCore

/// The closures one `ObservedRows` value was made with, as an identity: a new value (its parent view drew
/// again, and may have given other closures) gets a new one, while the same value asked for its body again
/// (its section's rows changed) keeps it.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
package final class RowClosuresIdentity: Sendable {
  package init() {}
}

/// What a row view of `ObservedRows` is compared by when SwiftUI draws the section again: the list, the
/// row object, the interactions and the closures' identity. SwiftUI cannot compare closures, so a row view
/// that stored them plainly would be unequal every time, and every row's `body` would run again whenever
/// the section's rows are assigned; compared by this, a row's `body` runs again only when its own item
/// changes (Observation) or when the closures may have changed.
///
/// - Complexity: O(1) to make and to compare.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
package struct ObservedRowIdentity<Section: SectionType>: Equatable, Sendable {
  package let list: ObservedList<Section>
  package let row: ObservedRow<Section.Item>
  package let interactions: ListInteractions<Section>?
  package let closures: RowClosuresIdentity

  package init(
    list: ObservedList<Section>, row: ObservedRow<Section.Item>, interactions: ListInteractions<Section>?,
    closures: RowClosuresIdentity
  ) {
    self.list = list
    self.row = row
    self.interactions = interactions
    self.closures = closures
  }

  /// Equal when both show the same row object of the same list, with the same interactions and closures.
  package static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.list === rhs.list && lhs.row === rhs.row && lhs.interactions === rhs.interactions
      && lhs.closures === rhs.closures
  }
}
