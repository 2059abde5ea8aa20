// A group's row changes as the database's `board_write_rows` takes them.

import LiveBoard
import Testing

@testable import BoardCluster

@Suite("A group's row changes")
struct RowChangesTests {
  @Test("every kind of change is listed in order, with its places and a private card's owner")
  func encoding() throws {
    let rows = try ClusterBoard.encodeRows([
      .insert(Card(id: "a", title: "A \"quoted\""), column: "todo", at: 2),
      .update(Card(id: "a", title: "A", owner: "alice")),
      .move("a", from: (column: "todo", index: 2), to: (column: "doing", index: 0)),
      .delete("b", column: "done", at: 5),
    ])
    #expect(
      rows
        == #"[{"at":"2","column":"todo","id":"a","kind":"insert","owner":null,"title":"A \"quoted\""},"#
        + #"{"id":"a","kind":"update","owner":"alice","title":"A"},"#
        + #"{"from":"todo","fromAt":"2","id":"a","kind":"move","to":"doing","toAt":"0"},"#
        + #"{"at":"5","column":"done","id":"b","kind":"delete"}]"#)
  }
}
