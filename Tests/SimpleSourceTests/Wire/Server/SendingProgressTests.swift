// How far a session's subscription was sent, explored exhaustively against a model: every wait resumed
// once, with the first message's outcome, and the waits for the end only once nothing more is written.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceWire

@Suite("Sending progress")
struct SendingProgressTests {
  /// The events of one exploration: `SIMPLESOURCE_SENDING_DEPTH`, 9 by default.
  static let depth = Int(ProcessInfo.processInfo.environment["SIMPLESOURCE_SENDING_DEPTH"] ?? "") ?? 9

  enum Event: CustomStringConvertible {
    case awaitFirst, awaitEnd, firstMessage(sent: Bool), finished

    var description: String {
      switch self {
      case .awaitFirst: "awaitFirst"
      case .awaitEnd: "awaitEnd"
      case .firstMessage(let sent): "firstMessage(sent: \(sent))"
      case .finished: "finished"
      }
    }
  }

  /// What the model knows: the outcome of the first message once reported, whether nothing more is
  /// written, the waits parked, and what each wait was resumed with (a wait is a number).
  struct Model {
    var firstSent: Bool?
    var ended = false
    var waitingForFirst: Set<Int> = []
    var waitingForEnd: Set<Int> = []
    var resumed: [Int: Bool] = [:]
    var nextWaiter = 0
  }

  @Test("every sequence of waits and reports: each wait resumed once, with the outcome, never early")
  func exhaustive() {
    var sequences = 0
    func explore(_ machine: SendingProgress<Int>, _ model: Model, _ path: [Event]) {
      guard path.count < Self.depth else {
        sequences += 1
        return
      }
      var events: [Event] = [.awaitFirst, .awaitEnd]
      switch machine.phase {
      case .starting: events += [.firstMessage(sent: true), .firstMessage(sent: false)]
      case .following: events.append(.finished)
      case .finished: break
      }
      for event in events {
        var machine = machine
        var model = model
        let path = path + [event]
        let resumed: [(Int, Bool)]
        switch event {
        case .awaitFirst:
          let waiter = model.nextWaiter
          model.nextWaiter += 1
          let outcome = machine.awaitFirst(waiter)
          #expect(outcome == model.firstSent, "awaitFirst answered \(String(describing: outcome)): \(path)")
          if let outcome {
            resumed = [(waiter, outcome)]
          } else {
            model.waitingForFirst.insert(waiter)
            resumed = []
          }
        case .awaitEnd:
          let waiter = model.nextWaiter
          model.nextWaiter += 1
          let done = machine.awaitEnd(waiter)
          #expect(done == model.ended, "awaitEnd answered \(done): \(path)")
          if done {
            resumed = [(waiter, true)]
          } else {
            model.waitingForEnd.insert(waiter)
            resumed = []
          }
        case .firstMessage(let sent):
          let (first, ended) = machine.firstMessage(sent: sent)
          #expect(Set(first) == model.waitingForFirst, "first waits resumed \(first): \(path)")
          model.firstSent = sent
          model.waitingForFirst = []
          if sent {
            #expect(ended.isEmpty, "ended waits resumed on a sent first message: \(path)")
          } else {
            #expect(Set(ended) == model.waitingForEnd, "ended waits resumed \(ended): \(path)")
            model.ended = true
            model.waitingForEnd = []
          }
          resumed = first.map { ($0, sent) } + ended.map { ($0, true) }
        case .finished:
          let ended = machine.finished()
          #expect(Set(ended) == model.waitingForEnd, "ended waits resumed \(ended): \(path)")
          model.ended = true
          model.waitingForEnd = []
          resumed = ended.map { ($0, true) }
        }
        for (waiter, value) in resumed {
          #expect(model.resumed[waiter] == nil, "wait \(waiter) resumed twice: \(path)")
          model.resumed[waiter] = value
        }
        // Nothing parked is lost: what is parked is what the model parked, and nothing waits once ended.
        #expect(
          machine.waitingCount == model.waitingForFirst.count + model.waitingForEnd.count,
          "\(machine.waitingCount) waits parked: \(path)")
        if model.ended { #expect(machine.waitingCount == 0, "a wait parked after the end: \(path)") }
        #expect(machine.phase == (model.ended ? .finished : model.firstSent == nil ? .starting : .following))
        explore(machine, model, path)
      }
    }
    explore(SendingProgress(), Model(), [])
    #expect(sequences > 1_000)
    print("sending progress: \(sequences) sequences of \(Self.depth) events")
  }

  /// The session's own use, through ``SendingControl``: a wait for the first message and one for the end,
  /// made before or after either is reported, return with what the sending tasks reported.
  @Test("the control's waits return what the sending tasks report")
  func control() async {
    let control = SendingControl<TestSection>()
    async let first = control.firstMessageSent()
    async let end: Void = control.ended()
    control.firstMessage(sent: true)
    #expect(await first)
    control.finished()
    await end
    #expect(await control.firstMessageSent())
    await control.ended()

    let refused = SendingControl<TestSection>()
    async let refusedEnd: Void = refused.ended()
    refused.firstMessage(sent: false)
    #expect(await !refused.firstMessageSent())
    await refusedEnd
  }
}
