// A write racing its deadline, explored exhaustively: every place the deadline can fall among the writer's
// steps gives exactly one answer, no step after it, and the prepared write answered exactly once.

import Testing

@testable import BoardCluster

@Suite("A write against its deadline")
struct WriteDeadlineTests {
  /// The writer's steps, in order: lease a connection, checked steps, hold its prepared write, send
  /// COMMIT (or a statement that commits by itself, which may answer that it made nothing: the writer then
  /// abandons its write and goes on), finish.
  enum Step { case attach, proceed, hold, commit, madeNothing, finish }

  /// The writers: how many checked steps before and after preparing, and whether each prepares and
  /// commits (a refused write finishes early).
  static var writers: [[Step]] {
    var writers: [[Step]] = []
    for before in 0...2 {
      let start: [Step] = [.attach] + Array(repeating: .proceed, count: before)
      writers.append(start + [.finish])  // refused before preparing
      for after in 0...2 {
        let prepared = start + [.hold] + Array(repeating: .proceed, count: after)
        writers.append(prepared + [.finish])  // failed before COMMIT
        writers.append(prepared + [.commit, .finish])
        // Made in one statement, which committed nothing: answered so (an edit answered already), or
        // made again in a transaction of its own.
        let again = prepared + [.commit, .madeNothing]
        writers.append(again + [.finish])
        writers.append(again + [.proceed, .hold, .proceed, .commit, .finish])
        writers.append(again + [.proceed, .hold, .finish])
        // Refused for contention before COMMIT, and made again.
        writers.append(prepared + [.madeNothing, .proceed, .hold, .commit, .finish])
      }
    }
    return writers
  }

  @Test("the deadline at every point of every writer: one answer, no step after it, the write answered once")
  func exhaustive() {
    var cases = 0
    for steps in Self.writers {
      for deadlineAt in 0...steps.count {
        cases += 1
        var machine = WriteDeadline<Int, String>()
        var answers: [String] = []
        var committed = false
        var expired = false
        var stopped = false
        var held = false
        var prepared = 0
        // Who answered the prepared write: the deadline (abandon) or the writer (apply or abandon).
        var preparedAnswers: [String] = []
        func expire() {
          expired = true
          switch machine.expire() {
          case .nothing: break
          case .notMade(let connection, let abandon):
            #expect(!committed, "notMade after COMMIT: \(steps), deadline at \(deadlineAt)")
            #expect(connection == (steps.prefix(deadlineAt).contains(.attach) ? 7 : nil))
            #expect((abandon != nil) == held)
            if abandon != nil { preparedAnswers.append("deadline") }
            answers.append("notMade")
          case .unknownOutcome(let connection, let abandon):
            #expect(committed && connection == 7 && (abandon != nil) == held)
            if abandon != nil { preparedAnswers.append("deadline") }
            answers.append("unknownOutcome")
          }
        }
        for (index, step) in steps.enumerated() {
          if index == deadlineAt { expire() }
          guard !stopped else { continue }
          switch step {
          case .attach:
            let attached = machine.attach(7)
            #expect(attached == !expired)
            if !attached { stopped = true }
          case .proceed:
            let may = machine.mayProceed()
            #expect(may == !expired, "a step after the deadline: \(steps), deadline at \(deadlineAt)")
            if !may { stopped = true }
          case .hold:
            prepared += 1
            let holding = machine.hold("write")
            #expect(holding == !expired)
            if holding {
              held = true
            } else {
              preparedAnswers.append("writer")  // it abandons what it prepared itself
              stopped = true
            }
          case .commit:
            let may = machine.commit()
            #expect(may == !expired)
            if may { committed = true } else { stopped = true }
          case .madeNothing:
            let going = machine.madeNothing()
            #expect(going == !expired)
            if going {
              committed = false
              if held { preparedAnswers.append("writer") }  // it abandons what it prepared
              held = false
            } else {
              stopped = true
            }
          case .finish:
            if machine.finish() {
              answers.append("writer")
              if held { preparedAnswers.append("writer") }
            }
          }
          // A writer that stopped still finishes (with an error) and is told whether it answers; the
          // deadline abandoned what it had handed over.
          if stopped, machine.finish() { answers.append("writer") }
        }
        if deadlineAt == steps.count {
          let late = machine.expire()
          #expect(late == .nothing, "a deadline after the writer finished answered again")
        }
        #expect(answers.count == 1, "answers \(answers): \(steps), deadline at \(deadlineAt)")
        #expect(
          preparedAnswers.count == prepared,
          "prepared write answered \(preparedAnswers): \(steps), deadline at \(deadlineAt)")
      }
    }
    print("Write deadline: \(cases) placements of the deadline over \(Self.writers.count) writers")
  }
}
