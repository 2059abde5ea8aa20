// Every sequence of the publish sequencer's events up to a fixed depth, synchronously.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import Testing

@Suite("Publish sequencer")
struct PublishSequencerTests {
  enum Event: CustomStringConvertible {
    case accept(from: Int, to: Int)
    case next
    case finish
    var description: String {
      switch self {
      case .accept(let from, let to): "accept(\(from)→\(to))"
      case .next: "next"
      case .finish: "finish"
      }
    }
  }

  @Test("up to 8 events: batches come out once each, in the order accepted, to one drainer at a time")
  func exhaustive() {
    var sequences = 0
    func explore(
      _ machine: PublishSequencer<Int>, accepted: [Int], delivered: [Int], path: [Event], depth: Int
    ) {
      sequences += 1
      #expect(delivered == Array(accepted.prefix(delivered.count)), "out of order: \(path)")
      #expect(machine.queue == Array(accepted.dropFirst(delivered.count)), "queue lost a batch: \(path)")
      if !machine.isDraining { #expect(machine.queue.isEmpty, "batches left with no drainer: \(path)") }
      guard depth > 0 else { return }
      var events: [Event] = [.finish]
      for from in [machine.version - 1, machine.version] { events += [.accept(from: from, to: from + 1)] }
      events.append(.accept(from: machine.version, to: machine.version))
      if machine.isDraining { events.append(.next) }
      for event in events {
        var next = machine
        var accepted = accepted
        var delivered = delivered
        switch event {
        case .accept(let from, let to):
          let wasDraining = next.isDraining
          let acceptance = next.accept(to, from: from, to: to)
          switch acceptance {
          case .drain:
            #expect(!wasDraining, "two drainers: \(path)")
            accepted.append(to)
          case .queued:
            #expect(wasDraining, "queued with nobody draining: \(path)")
            accepted.append(to)
          case .stale(let expected): #expect(from != machine.version && expected == machine.version)
          case .notAfter: #expect(to <= from)
          case .finished: #expect(machine.isFinished)
          }
        case .next:
          if let batch = next.next() { delivered.append(batch) }
        case .finish:
          _ = next.finish()
        }
        explore(next, accepted: accepted, delivered: delivered, path: path + [event], depth: depth - 1)
      }
    }
    explore(PublishSequencer(version: 0), accepted: [], delivered: [], path: [], depth: 8)
    print("Publish sequencer: \(sequences) sequences of up to 8 events")
    #expect(sequences > 10_000)
  }
}
