// The shared-views state machine of WireService: every sequence of acquires and releases to a depth,
// against a plain model.

import Testing

@testable import SimpleSourceWire

@Suite("Shared views")
struct SharedViewsTests {
  /// Two keys, one idle view kept; the model counts users per key and lists idle keys by last use.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      case acquire(Int)
      case release(Int, keep: Bool)
      var description: String {
        switch self {
        case .acquire(let key): "acquire \(key)"
        case .release(let key, let keep): keep ? "release \(key)" : "discard \(key)"
        }
      }
    }

    var views = SharedViews<Int, Int>(idleLimit: 1)
    /// Each session's view: key and view number.
    var leases: [(key: Int, number: Int)] = []
    var made = 0
    var idleModel: [Int: Int] = [:]  // key → view number
    var idleOrder: [Int] = []
    var dropped: Set<Int> = []

    func steps() -> [Step] {
      var steps: [Step] = [.acquire(0), .acquire(1)]
      for key in Set(leases.map(\.key)).sorted() {
        steps += [.release(key, keep: true), .release(key, keep: false)]
      }
      return steps
    }

    mutating func perform(_ step: Step) throws {
      switch step {
      case .acquire(let key):
        let expected = leases.first { $0.key == key }?.number ?? idleModel[key]
        if let entry = views.acquire(key) {
          guard entry.number == expected, !dropped.contains(entry.number) else {
            throw ExplorationFailure(
              description: "acquired view \(entry.number), expected \(String(describing: expected))")
          }
          leases.append((key, entry.number))
        } else {
          guard expected == nil else { throw ExplorationFailure(description: "view \(expected!) not found") }
          made += 1
          views.add(key, .init(view: made, number: made))
          leases.append((key, made))
        }
        if idleModel.removeValue(forKey: key) != nil { idleOrder.removeAll { $0 == key } }
      case .release(let key, let keep):
        let index = leases.firstIndex { $0.key == key }!
        let lease = leases.remove(at: index)
        let evicted = views.release(key, number: lease.number, keep: keep)
        var expected: [Int] = []
        if !leases.contains(where: { $0.key == key }) {
          if keep {
            idleModel[key] = lease.number
            idleOrder.append(key)
            while idleOrder.count > 1 {
              expected.append(idleModel.removeValue(forKey: idleOrder.removeFirst())!)
            }
          } else {
            expected.append(lease.number)
          }
        }
        guard evicted == expected else {
          throw ExplorationFailure(description: "evicted \(evicted), expected \(expected)")
        }
        dropped.formUnion(evicted)
      }
    }

    mutating func checkSettled() throws {
      let users = Dictionary(grouping: leases, by: \.key).mapValues(\.count)
      guard views.live.mapValues(\.users) == users, views.idle.mapValues(\.number) == idleModel,
        views.idleOrder == idleOrder
      else {
        throw ExplorationFailure(
          description:
            "live \(views.live.mapValues(\.users)) idle \(views.idleOrder), model \(users) \(idleOrder)")
      }
    }
  }

  @Test("every sequence of acquires, releases and discards to depth 8 keeps the model's users and idle views")
  func everySequence() throws {
    let sequences = try exploreEverySequence(from: World(), depth: 8).sequences
    print("Shared views: \(sequences) sequences checked")
    #expect(sequences > 1_000)
  }

  @Test("a stale release (of a view already replaced) changes nothing")
  func staleRelease() {
    var views = SharedViews<Int, Int>(idleLimit: 0)
    views.add(0, .init(view: 1, number: 1))
    #expect(views.release(0, number: 1, keep: false) == [1])
    views.add(0, .init(view: 2, number: 2))
    #expect(views.release(0, number: 1).isEmpty)
    #expect(views.live[0]?.users == 1)
  }
}
