// The README walkthrough on UIKit, type-checked against the UIKit stand-in by .ci/skins-typecheck.
import UIKit
import SimpleSource

struct Employee: Identifiable, Equatable, Sendable { var id: String; var name: String }
struct Department: SectionType {
  var id: String
  var name: String
  var items: [Employee]
  func isContentEqual(to other: Department) -> Bool { name == other.name }
}
final class SwitchCell: UITableViewCell { func configure(title: String, isOn: Bool) {} }
final class Badge: UICollectionReusableView { var text = "" }

@MainActor
func walkthrough(tableView: UITableView, collectionView: UICollectionView) async throws -> [AnyObject] {
  let dataSource = try BasicDataSource(sections: [Department(id: "eng", name: "Engineering", items: [])])
  let viewFactory = TableViewFactory<Department> { employee, tableView in "Cell" }
  viewFactory.registerCell(method: .style(.default), reuseIdentifier: "Cell", in: tableView) {
    (cell: UITableViewCell, employee: Employee, indexPath: IndexPath) in
    cell.textLabel?.text = employee.name
  }
  viewFactory.registerCell(method: .class, reuseIdentifier: "Switch", in: tableView) {
    (cell: SwitchCell, employee: Employee, _) in cell.configure(title: employee.name, isOn: true)
  }
  viewFactory.registerHeaderText { department, index in department.name }
  let tableViewDataSource = TableViewDataSource(
    dataSource: dataSource, viewFactory: viewFactory, viewUpdate: tableView.defaultViewUpdate(.fade))
  tableView.dataSource = tableViewDataSource
  tableViewDataSource.reorderingDelegate = dataSource
  tableViewDataSource.viewDataSource.interactions.all.didSelect = { employee, _ in .deselect }
  tableViewDataSource.viewDataSource.interactions.all.commitEdit = { _, employee, _ in
    try await dataSource.deleteItems([employee.id])
  }
  tableViewDataSource.fallbackDelegate = nil
  tableView.delegate = tableViewDataSource

  let collectionFactory = CollectionViewFactory<Department> { _, _ in "Cell" }
  collectionFactory.registerCell(method: .class, reuseIdentifier: "Cell", in: collectionView) {
    (cell: UICollectionViewCell, employee: Employee, _) in
  }
  collectionFactory.registerHeaderView(method: .class, reuseIdentifier: "Header", in: collectionView) {
    (header: Badge, department: Department, _) in header.text = department.name
  }
  let collectionViewDataSource = CollectionViewDataSource(
    dataSource: dataSource, viewFactory: collectionFactory, viewUpdate: collectionView.unanimatedViewUpdate())
  collectionView.dataSource = collectionViewDataSource
  collectionView.delegate = collectionViewDataSource
  collectionViewDataSource.reorderingDelegate = dataSource
  collectionViewDataSource.beginInteractiveMovementForItem(at: [0, 0], in: collectionView)
  collectionViewDataSource.endInteractiveMovement(in: collectionView)
  return [tableViewDataSource, collectionViewDataSource]
}
