// The turns a session's subscription changes take, explored exhaustively against a model: one holder at a
// time, handed over in arrival order, none lost.

import Foundation
import Testing

@testable import SimpleSourceWire

@Suite("Session turns")
struct SessionTurnsTests {
  /// Changes that arrive in one exploration: every order of their arrivals and of the holder leaving.
  static let changes = Int(ProcessInfo.processInfo.environment["SIMPLESOURCE_TURNS_CHANGES"] ?? "") ?? 6

  /// What the model knows: who holds the turn, who waits (in arrival order), who has not arrived, who ran.
  struct Model {
    var holder: Int?
    var waiting: [Int] = []
    var notArrived: [Int]
    var ran: [Int] = []
    var arrived: [Int] = []
  }

  @Test("every sequence of arrivals and leaves: one holder, arrival order, nothing lost, free when done")
  func exhaustive() {
    var sequences = 0
    func explore(_ machine: SessionTurns<Int>, _ model: Model, _ path: [String]) {
      var ended = true
      // A change arrives (the next one: their names are their arrival order).
      if let next = model.notArrived.first {
        ended = false
        var machine = machine
        var model = model
        model.notArrived.removeFirst()
        model.arrived.append(next)
        let granted = machine.enter(next)
        #expect(granted == (model.holder == nil), "enter(\(next)) granted \(granted): \(path)")
        if model.holder == nil {
          model.holder = next
          model.ran.append(next)
        } else {
          model.waiting.append(next)
        }
        check(machine, model, path + ["enter \(next)"])
        explore(machine, model, path + ["enter \(next)"])
      }
      // The holder leaves.
      if let holder = model.holder {
        ended = false
        var machine = machine
        var model = model
        let handed = machine.leave()
        #expect(
          handed == model.waiting.first, "leave by \(holder) handed \(String(describing: handed)): \(path)")
        if model.waiting.isEmpty {
          model.holder = nil
        } else {
          model.holder = model.waiting.removeFirst()
          model.ran.append(model.holder!)
        }
        check(machine, model, path + ["leave \(holder)"])
        explore(machine, model, path + ["leave \(holder)"])
      }
      if ended {
        sequences += 1
        #expect(model.ran == model.arrived, "turns not in arrival order: \(model.ran), \(path)")
        #expect(!machine.isHeld && machine.waitingCount == 0, "not free at the end: \(path)")
      }
    }
    func check(_ machine: SessionTurns<Int>, _ model: Model, _ path: [String]) {
      #expect(machine.isHeld == (model.holder != nil), "held: \(path)")
      #expect(machine.waitingCount == model.waiting.count, "waiting: \(path)")
    }
    explore(SessionTurns(), Model(notArrived: Array(0..<Self.changes)), [])
    #expect(sequences > 0)
    print("Session turns: \(sequences) sequences of \(Self.changes) changes")
  }

  @Test("many changes through one machine compact their queue and still hand over in order")
  func longQueue() {
    var machine = SessionTurns<Int>()
    var handed: [Int?] = []
    var granted = [machine.enter(0)]
    for index in 1...100 { granted.append(machine.enter(index)) }
    for index in 1...100 {
      handed.append(machine.leave())
      if index % 3 == 0 { granted.append(machine.enter(1000 + index)) }
    }
    for _ in stride(from: 3, through: 99, by: 3) { handed.append(machine.leave()) }
    handed.append(machine.leave())
    #expect(granted == [true] + Array(repeating: false, count: 133))
    let expected: [Int?] = Array(1...100) + Array(stride(from: 1003, through: 1099, by: 3)) + [nil]
    #expect(handed == expected)
    #expect(!machine.isHeld)
  }
}
