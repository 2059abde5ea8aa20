// A write racing its deadline, explored exhaustively: every place the deadline can fall among the writer's
// steps gives exactly one answer, and no step after the deadline.

import Testing

@testable import LiveBoard

@Suite("A write against its deadline")
struct WriteDeadlineTests {
  /// The writer's steps, in order: lease a connection, steps that check the race, send COMMIT, finish.
  enum Step: CaseIterable { case attach, proceed, commit, finish }

  @Test("the deadline at every point of every writer: one answer, nothing after it, the outcome told right")
  func exhaustive() {
    var cases = 0
    // How many checked steps the writer makes (0 to 3), whether it fails before COMMIT, and where the
    // deadline falls (before step k, or never).
    for proceeds in 0...3 {
      for failsBeforeCommit in [false, true] {
        var steps: [Step] = [.attach] + Array(repeating: .proceed, count: proceeds)
        if !failsBeforeCommit { steps.append(.commit) }
        steps.append(.finish)
        for deadlineAt in 0...steps.count {
          cases += 1
          var machine = WriteDeadline<Int>()
          var answers: [String] = []
          var committed = false
          var expired = false
          var stopped = false
          for (index, step) in steps.enumerated() {
            if index == deadlineAt {
              expired = true
              switch machine.expire() {
              case .nothing: break
              case .notMade(let connection):
                #expect(!committed, "notMade after COMMIT: \(steps), deadline at \(deadlineAt)")
                #expect(connection == (index > 0 ? 7 : nil))
                answers.append("notMade")
              case .unknownOutcome(let connection):
                #expect(committed && connection == 7)
                answers.append("unknownOutcome")
              }
            }
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
            case .commit:
              let may = machine.commit()
              #expect(may == !expired)
              if may { committed = true } else { stopped = true }
            case .finish:
              if machine.finish() { answers.append("writer") }
            }
            // A writer that stopped still finishes (it returns an error), and is told whether it answers.
            if stopped, machine.finish() { answers.append("writer") }
          }
          if deadlineAt == steps.count {
            let late = machine.expire()
            #expect(late == .nothing, "a deadline after the writer finished answered again")
          }
          #expect(answers.count == 1, "answers \(answers): \(steps), deadline at \(deadlineAt)")
        }
      }
    }
    print("Write deadline: \(cases) placements of the deadline")
  }
}
