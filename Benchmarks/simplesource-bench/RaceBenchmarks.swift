// `client-edit-races`: clients change one field of items whose other field server tasks change at the
// same time; counts the field changes lost when a client's edit is a whole-item replace, a patch, or a
// named edit.

import Foundation
import SimpleSource

/// An item with two fields written by different writers: `stage` by clients, `value` by server tasks.
struct RaceDeal: Identifiable, Equatable, Sendable, Codable {
  let id: Int
  var stage: Int
  var value: Int
}

typealias RaceSection = Section<Int, RaceDeal>

/// The arguments of `setStage`.
struct StageChange: Codable, Sendable {
  var id: Int
  var stage: Int
}

/// The clients' named edit: sets the stage of the deal as the source holds it.
let setStage = NamedEdit<RaceSection, StageChange>("setStage") { change, transaction in
  try transaction.updateItem(change.id) { $0.stage = change.stage }
}

/// How a client sends its change of `stage`.
enum RaceEditKind: String, CaseIterable, Sendable {
  /// Its copy of the whole item, with the new stage.
  case replace
  /// A patch of `stage`.
  case patch
  /// The named edit `setStage`.
  case named
}

/// `client-edit-races`: 4 in-process clients (`RemoteDataSource`s connected to a `WireService`) make 10,000
/// edits in all of the `stage` of 200 items, each awaited, while 2 server tasks write the `value` of the
/// same items directly until the clients are done; once with each kind of edit. A field change is lost when the item's
/// final field is not the last committed write to it (each item's stage has one client writer and its
/// value one server writer, so the last write of each is known). The run stops when a named edit or a
/// patch lost one.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func clientEditRaces() async -> RuntimeResult {
  var lost: [RaceEditKind: Int] = [:]
  var refused = 0
  var ms: [RaceEditKind: Double] = [:]
  for kind in RaceEditKind.allCases {
    let result = await clientEditRace(kind)
    lost[kind] = result.lost
    refused += result.refused
    ms[kind] = result.ms
  }
  // Named edits and patches keep every field's last write: a lost one is a bug, not a figure.
  guard lost[.named] == 0, lost[.patch] == 0 else {
    fatalError("field changes lost: \(lost[.named] ?? -1) by named edits, \(lost[.patch] ?? -1) by patches")
  }
  return RuntimeResult(
    name: "client-edit-races", ms: ms[.named] ?? 0, floorMS: ms[.replace] ?? 1,
    extra: [
      "lost_field_changes_named": Double(lost[.named] ?? 0),
      "lost_field_changes_patch": Double(lost[.patch] ?? 0),
      "lost_field_changes_replace": Double(lost[.replace] ?? 0),
      "refused": Double(refused),
      "patch_ms": ms[.patch] ?? 0,
    ],
    note:
      "4 clients' 10,000 stage edits beside 2 tasks writing values meanwhile, on 200 items; ms: named edits, "
      + "floor: replace")
}

/// One run of `client-edit-races` with clients' edits of `kind`.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func clientEditRace(_ kind: RaceEditKind) async -> (lost: Int, refused: Int, ms: Double) {
  let (clients, editsPerClient, items) = (4, sized(2_500, quick: 250), 200)
  // The server tasks write until the clients are done, so that every client edit races them (at most
  // this many writes each, so that the run stops by itself).
  let (serverTasks, writesPerTask) = (2, sized(50_000, quick: 5_000))
  let clientsDone = Locked(0)
  let deals = (0..<items).map { RaceDeal(id: $0, stage: 0, value: 0) }
  guard let source = try? BasicDataSource(sections: [RaceSection(id: 0, items: deals)]) else {
    fatalError("invalid data")
  }
  let named = NamedEdits<RaceSection>([setStage])
  let service = WireService(
    source: source, stream: "race-\(kind)", edits: .transactions(on: source, named: named))
  var remotes: [RemoteDataSource<RaceSection>] = []
  var connections: [WireConnection<RaceSection>] = []
  for _ in 0..<clients {
    let remote = RemoteDataSource<RaceSection>(named: named)
    let connection = await service.connect(remote)
    await connection.settled()
    remotes.append(remote)
    connections.append(connection)
  }
  let refused = Locked(0)
  // Each item's stage is written by one client, its value by one server task: the last write is known.
  let lastStage = Locked([Int: Int]())
  let lastValue = Locked([Int: Int]())
  let start = ContinuousClock.now
  await withTaskGroup(of: Void.self) { group in
    for (client, remote) in remotes.enumerated() {
      group.addTask {
        for index in 0..<editsPerClient {
          let id = client + clients * (index % (items / clients))
          let stage = index + 1
          let operation: WireOperation<RaceSection>
          switch kind {
          case .replace:
            guard var shown = await remote.snapshot.item(withID: id) else { fatalError("item \(id) missing") }
            shown.stage = stage
            operation = .replace(shown)
          case .patch: operation = .patch(id, ["stage": .integer(stage)])
          case .named: operation = setStage(StageChange(id: id, stage: stage))
          }
          do {
            _ = try await remote.edit([operation])
            lastStage.withLock { $0[id] = stage }
          } catch {
            refused.withLock { $0 += 1 }
          }
        }
        clientsDone.withLock { $0 += 1 }
      }
    }
    for task in 0..<serverTasks {
      group.addTask {
        for index in 0..<writesPerTask where clientsDone.withLock({ $0 }) < clients {
          let id = task + serverTasks * (index % (items / serverTasks))
          let value = index + 1
          if (try? await source.updateItem(id, { $0.value = value })) != nil {
            lastValue.withLock { $0[id] = value }
          }
        }
      }
    }
  }
  await source.settled()
  let elapsed = elapsedMS(since: start)
  for connection in connections { await connection.close() }
  let final = await source.snapshot
  let (stages, values) = (lastStage.withLock { $0 }, lastValue.withLock { $0 })
  var lost = 0
  for deal in final.sections[0].items {
    if let stage = stages[deal.id], deal.stage != stage { lost += 1 }
    if let value = values[deal.id], deal.value != value { lost += 1 }
  }
  return (lost, refused.withLock { $0 }, elapsed)
}
