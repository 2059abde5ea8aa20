// The list view of the DocC article *Lists in SwiftUI*, as it is written there (between the markers), with
// the declarations it assumes. Type-checked by .ci/skins-typecheck against the stand-in; never run.
import Observation
import SimpleSource
import SwiftUI

struct Chore: Identifiable, Hashable, Sendable {
  var id: String
  var title: String
  var isDone = false
}

@MainActor @Observable final class Refusals {
  var last: String?
}

// --- the article's view
typealias Chores = SimpleSource.Section<String, Chore>   // SwiftUI has a Section too

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
struct ChoresView: View {
  let list: ObservedList<Chores>   // await ObservedList(following: chores)
  let chores: BasicDataSource<Chores>
  let refusals: Refusals           // an @Observable that shows what the source refused

  var body: some View {
    List {
      ForEach(list.sections) { section in
        SwiftUI.Section(section.content.id) {
          ObservedRows(
            list, section: section, reordering: chores,
            deleting: { try await chores.deleteItems($0) },
            refused: { refusals.last = "\($0)" }
          ) { chore in
            Text(chore.title)
          }
        }
      }
    }
    #if os(iOS) || os(visionOS)
      .toolbar { EditButton() }   // EditButton exists on iOS and visionOS only
    #endif
  }
}
// --- end

@MainActor func swipeActions(for chores: BasicDataSource<Chores>) -> ListInteractions<Chores> {
  // --- the article's swipe actions
  let interactions = ListInteractions<Chores>()
  interactions.all.trailingSwipeActions = { chore, _ in
    SwipeActions([SwipeAction(title: "Done", systemImageName: "checkmark") { chore, _ in
      var done = chore
      done.isDone = true
      try await chores.replaceItem(done)
      return true
    }])
  }
  // --- end
  return interactions
}

struct SwipingView: View {
  let list: ObservedList<Chores>
  let interactions: ListInteractions<Chores>
  var body: some View {
    List {
      ForEach(list.sections) { section in
        ObservedRows(list, section: section, interactions: interactions, reuseIdentifier: { _ in "chore" }) {
          Text($0.title)
        }
      }
    }
  }
}

struct OwnRowsView: View {
  let list: ObservedList<Chores>
  let chores: BasicDataSource<Chores>
  var body: some View {
    // --- the article's own rows
    List {
      ForEach(list.sections[0].rows) { row in Text(row.item.title) }
        .onMove { list.move(fromOffsets: $0, toOffset: $1, inSection: 0, using: chores) }
        .onDelete { list.delete(atOffsets: $0, inSection: 0) { try await chores.deleteItems($0) } }
    }
    // --- end
  }
}

// --- the article's transaction in a SwiftUI file
func markAllDone(_ chores: BasicDataSource<Chores>) async throws {
  try await chores.transaction { (transaction: inout SimpleSource.Transaction<Chores>) in
    for chore in transaction.snapshot.sections.flatMap(\.items) where !chore.isDone {
      try transaction.updateItem(chore.id) { $0.isDone = true }
    }
  }
}
// --- end
