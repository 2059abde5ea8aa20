// The edit log against a plain model: every sequence of its operations to a depth.

import Testing

@testable import SimpleSourceCore

@Suite("Edit log")
struct EditLogTests {
  /// The plain model: the ids touched and whether the sections were reshaped, kept apart.
  struct Model: Equatable {
    var touched: Set<Int> = []
    var reshaped = false

    var touching: Set<Int>? { reshaped ? nil : touched }
  }

  enum Operation: CaseIterable, CustomStringConvertible {
    case insert, insertAgain, unionTwo, unionNone, reshape, mergeNothing, mergeTouched, mergeReshaped, take

    var description: String { "\(self)" }

    func apply(to log: inout EditLog<Int>, _ model: inout Model) {
      switch self {
      case .insert:
        log.insert(1)
        model.touched.insert(1)
      case .insertAgain:
        log.insert(2)
        log.insert(2)
        model.touched.insert(2)
      case .unionTwo:
        log.formUnion([2, 3])
        model.touched.formUnion([2, 3])
      case .unionNone:
        log.formUnion([])
      case .reshape:
        log.markReshaped()
        model.reshaped = true
      case .mergeNothing:
        log.merge(.nothing)
      case .mergeTouched:
        log.merge(.touched([3, 4]))
        model.touched.formUnion([3, 4])
      case .mergeReshaped:
        log.merge(.reshaped)
        model.reshaped = true
      case .take:
        let taken = log.take()
        #expect(taken.touching == model.touching)
        model = Model()
      }
    }
  }

  @Test("every sequence of edits, merges and takes to depth 5 says what the plain model says")
  func everySequence() {
    var sequences = 0
    func explore(_ log: EditLog<Int>, _ model: Model, path: [Operation], depth: Int) {
      sequences += 1
      #expect(log.touching == model.touching, "\(path)")
      if case .touched(let ids) = log { #expect(!ids.isEmpty, "an empty touched payload after \(path)") }
      #expect(EditLog(touching: log.touching) == log, "the log rebuilt from what it touches, after \(path)")
      guard depth > 0 else { return }
      for operation in Operation.allCases {
        var (nextLog, nextModel) = (log, model)
        operation.apply(to: &nextLog, &nextModel)
        explore(nextLog, nextModel, path: path + [operation], depth: depth - 1)
      }
    }
    explore(.nothing, Model(), path: [], depth: 5)
    let expected = (0...5).reduce(into: (total: 0, level: 1)) { sum, _ in
      sum.total += sum.level
      sum.level *= Operation.allCases.count
    }.total
    #expect(sequences == expected)
    print("Edit log: \(sequences) sequences of its operations to depth 5 agree with the plain model")
  }

  @Test("a store logs what its edits touched; applying a prepared store keeps both logs")
  func storeHandsItsLogOn() throws {
    let sections = [Section(id: "S", items: [Row(id: 1), Row(id: 2)])]
    var store = SectionStore(trusted: try Snapshot(sections))
    _ = try store.insertItems([Row(id: 3)], at: ItemPosition(section: 0, item: 0))
    // A prepared write edits a copy that logs only its own edits; the store keeps what is not cut yet.
    var prepared = store.withEmptyLog()
    #expect(prepared.log == .nothing && store.log == .touched([3]))
    _ = try prepared.deleteItems([2])
    store.take(prepared)
    #expect(store.log == .touched([2, 3]), "the store's uncut edit and the prepared write's, both")
    #expect(store.snapshot.sections == prepared.snapshot.sections)
    #expect(store.takeLog() == .touched([2, 3]) && store.log == .nothing)
  }

  struct Row: Identifiable, Equatable, Sendable {
    let id: Int
  }
}
