#include "runs/runs_page.h"

#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include "common/app_settings.h"
#include "common/fitted_columns.h"
#include "common/formatting.h"
#include "common/table_sizing.h"
#include "export/run_export.h"
#include "export/tracker_send.h"
#include "oomlab/advice/oom_fixes.h"
#include "oomlab/launch/rendezvous.h"
#include "runs/fix_outcome.h"
#include "runs/run_database.h"
#include "runs/runs_filter_model.h"
#include "runs/runs_model.h"

namespace oomlab::ui {

RunsPage::RunsPage(RunDatabase* database, QWidget* parent) : QWidget(parent), m_database(database) {
    setObjectName(QStringLiteral("runsPage"));
    m_model = new RunsModel(database, this);
    m_filter = new RunsFilterModel(this);
    m_filter->setSourceModel(m_model);

    m_search = new QLineEdit;
    m_search->setObjectName(QStringLiteral("runsSearch"));
    m_search->setPlaceholderText(
        tr("Filter: words (name, dataset, tags, notes…) or key=value (any setting)"));
    m_search->setClearButtonEnabled(true);
    m_status = new QComboBox;
    m_status->addItem(tr("any status"), QString());
    for (RunStatus status : {RunStatus::Completed, RunStatus::Oom, RunStatus::Failed,
                             RunStatus::Cancelled, RunStatus::Interrupted, RunStatus::Running}) {
        m_status->addItem(statusName(status), statusName(status));
    }
    // A tool bar, not a row of buttons: on a narrow screen the actions that do not fit go
    // into its » menu instead of widening the window.
    auto* actions = new QToolBar;
    actions->setObjectName(QStringLiteral("runsActions"));
    actions->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_compare = actions->addAction(tr("Compare"), this, &RunsPage::compareSelected);
    m_compare->setToolTip(tr("Compare the selected runs (two or more)"));
    m_rerun = actions->addAction(tr("Re-run"), this, &RunsPage::rerunSelected);
    m_rerun->setToolTip(tr("Run the selected run's config again"));
    QAction* load = actions->addAction(tr("Load config"), this, &RunsPage::loadSelected);
    load->setToolTip(tr("Put the selected run's settings into the experiment panel"));
    actions->addAction(tr("Rename…"), this, &RunsPage::renameCurrent);
    m_export = actions->addAction(tr("Export…"), this, &RunsPage::exportSelected);
    m_export->setToolTip(tr("Save the selected runs as JSON or their metrics as CSV"));
    m_sendToTracker = actions->addAction(tr("Send to tracker…"), this, &RunsPage::sendSelected);
    m_sendToTracker->setObjectName(QStringLiteral("sendToTracker"));
    m_sendToTracker->setToolTip(
        tr("Send the selected runs to an MLflow tracking server or a TensorBoard log folder"));
    m_sender = new TrackerSender(this);
    connect(m_sender, &TrackerSender::sent, this, &RunsPage::showSent);
    m_delete = actions->addAction(tr("Delete"), this, [this] { deleteSelected(true); });
    // The search above the actions, so the tool bar has the page's whole width: beside the
    // search, Delete (1366 px) and Rename, Export (1024 px) went into its » menu.
    auto* filters = new QHBoxLayout;
    filters->addWidget(m_search, 1);
    filters->addWidget(m_status);
    auto* bar = new QVBoxLayout;
    bar->addLayout(filters);
    bar->addWidget(actions);

    m_view = new QTableView;
    m_view->setObjectName(QStringLiteral("runsTable"));
    m_view->setModel(m_filter);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(RunsModel::Id, Qt::DescendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    m_view->setAlternatingRowColors(true);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    sizeRowsToText(m_view, 3);
    // What a room needs least goes first where the columns do not all fit: the run, its
    // status, its peak and its loss stay.
    m_columns = new FittedColumns(
        m_view,
        {RunsModel::Notes, RunsModel::Tags, RunsModel::Device, RunsModel::Created, RunsModel::Vocab,
         RunsModel::Duration, RunsModel::Steps, RunsModel::Cap, RunsModel::Precision,
         RunsModel::Optimizer, RunsModel::Embeddings, RunsModel::Dataset, RunsModel::Model,
         RunsModel::Accuracy, RunsModel::Batch},
        RunsModel::Name);
    if (m_view->horizontalHeader()->restoreState(
            AppSettings::value(QStringLiteral("runs/header")).toByteArray())) {
        m_columns->userSizedAll();
    }
    connect(m_view->horizontalHeader(), &QHeaderView::sectionResized, this,
            [this](int column, int, int width) {
                if (m_columns->fitting()) {
                    return;
                }
                m_columns->userSized(column, width);
                AppSettings::setValue(QStringLiteral("runs/header"),
                                      m_view->horizontalHeader()->saveState());
            });
    m_view->horizontalHeader()->setResizeContentsPrecision(200);  // rows looked at
    // Only when the rows are new: columns that moved when a run finished or was renamed moved
    // the cell under the pointer between the two clicks of a double-click.
    connect(m_model, &QAbstractItemModel::modelReset, this, &RunsPage::fitColumns);

    m_details = new QLabel;
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_notes = new QPlainTextEdit;
    m_notes->setObjectName(QStringLiteral("runNotes"));
    m_notes->setPlaceholderText(tr("Notes on the selected run (saved when you leave the field)"));
    m_notes->setMaximumHeight(m_notes->fontMetrics().height() * 6);
    m_notes->installEventFilter(this);
    auto* detailsBox = new QWidget;
    auto* detailsLayout = new QHBoxLayout(detailsBox);
    detailsLayout->setContentsMargins(0, 0, 0, 0);
    detailsLayout->addWidget(m_details, 3);
    detailsLayout->addWidget(m_notes, 2);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_view);
    split->addWidget(detailsBox);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);

    m_databaseLabel = new QLabel;
    m_databaseLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(split, 1);
    layout->addWidget(m_databaseLabel);

    connect(m_search, &QLineEdit::textChanged, m_filter, &RunsFilterModel::setText);
    // Other runs shown may need other widths (a class's runs alone fit where all did not).
    connect(m_search, &QLineEdit::textChanged, m_columns, &FittedColumns::fitSoon);
    connect(m_status, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
        m_filter->setStatusFilter(m_status->currentData().toString());
        m_columns->fitSoon();
    });
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        if (index.column() != RunsModel::Name && index.column() != RunsModel::Notes &&
            index.column() != RunsModel::Tags) {
            emit compareRequested(runWithItsFixes(index.data(RunsModel::RunIdRole).toLongLong()));
        }
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunsPage::updateDetails);
    connect(m_model, &QAbstractItemModel::modelReset, this, &RunsPage::updateDetails);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &RunsPage::updateDetails);
    connect(database, &RunDatabase::opened, this, [this](const QString& path) {
        m_databaseLabel->setText(tr("Database: %1").arg(path));
    });
    m_databaseLabel->setText(tr("Database: %1").arg(database->path()));
    updateDetails();
}

QVector<qint64> RunsPage::selectedRunIds() const {
    QVector<qint64> ids;
    for (const QModelIndex& index : m_view->selectionModel()->selectedRows()) {
        ids.push_back(index.data(RunsModel::RunIdRole).toLongLong());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

void RunsPage::selectRuns(const QVector<qint64>& runIds) {
    QItemSelection selection;
    for (qint64 id : runIds) {
        const int row = m_model->rowOfRun(id);
        if (row < 0) {
            continue;
        }
        const QModelIndex index = m_filter->mapFromSource(m_model->index(row, 0));
        if (index.isValid()) {
            selection.select(index, index.siblingAtColumn(RunsModel::ColumnCount - 1));
        }
    }
    m_view->selectionModel()->select(
        selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void RunsPage::setFilterText(const QString& text) {
    m_search->setText(text);
}

int RunsPage::currentSourceRow() const {
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    const QModelIndex index = rows.isEmpty() ? m_view->currentIndex() : rows.front();
    return index.isValid() ? m_filter->mapToSource(index).row() : -1;
}

void RunsPage::compareSelected() {
    const QVector<qint64> ids = selectedRunIds();
    if (!ids.isEmpty()) {
        emit compareRequested(ids);
    }
}

QString RunsPage::whyNotReusable(int row) const {
    const RunRecord* run = m_model->run(row);
    if (!m_model->config(row)) {
        return tr("Run %1's stored settings cannot be read: %2")
            .arg(run->id)
            .arg(m_model->configError(row));
    }
    if (run->world_size < 1 || run->world_size > kMostLocalWorkers) {
        return tr("Run %1 records %2 processes; the workbench trains with 1 to %3. Train it on "
                  "several machines with torchrun or Slurm (see docs/several-processes.md).")
            .arg(run->id)
            .arg(run->world_size)
            .arg(kMostLocalWorkers);
    }
    return {};
}

const ExperimentConfig* RunsPage::reusableConfig(const QString& action, int* processes) {
    const int row = currentSourceRow();
    const RunRecord* run = m_model->run(row);
    if (!run) {
        return nullptr;
    }
    m_reuseRefusal = whyNotReusable(row);
    if (!m_reuseRefusal.isEmpty()) {
        auto* box =
            new QMessageBox(QMessageBox::Warning, action, m_reuseRefusal, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return nullptr;
    }
    *processes = static_cast<int>(run->world_size);
    return m_model->config(row);
}

void RunsPage::loadSelected() {
    int processes = 1;
    if (const ExperimentConfig* config = reusableConfig(tr("Load config"), &processes)) {
        emit configRequested(*config, processes);
    }
}

void RunsPage::rerunSelected() {
    int processes = 1;
    if (const ExperimentConfig* config = reusableConfig(tr("Re-run"), &processes)) {
        emit rerunRequested(*config, qs(m_model->run(currentSourceRow())->name), processes);
    }
}

bool RunsPage::deleteSelected(bool confirm) {
    const QVector<qint64> ids = selectedRunIds();
    if (ids.isEmpty() || !m_database->isOpen()) {
        return false;
    }
    if (confirm && QMessageBox::question(this, tr("Delete runs"),
                                         plural(ids.size(),
                                                tr("Delete %n run with its metrics? This "
                                                   "cannot be undone."),
                                                tr("Delete %n runs with their metrics? This "
                                                   "cannot be undone."))) != QMessageBox::Yes) {
        return false;
    }
    m_deleteRefusals.clear();
    for (qint64 id : ids) {
        try {
            m_database->store().delete_run(id);
        } catch (const std::exception& error) {  // still training, or the file refused it
            m_deleteRefusals << qs(error.what());
        }
    }
    m_database->notifyRunsChanged();
    if (confirm && !m_deleteRefusals.isEmpty()) {
        QMessageBox::warning(this, tr("Delete runs"),
                             m_deleteRefusals.join(QStringLiteral("\n\n")));
    }
    return m_deleteRefusals.size() < ids.size();
}

void RunsPage::renameCurrent() {
    const int row = currentSourceRow();
    const RunRecord* run = m_model->run(row);
    if (!run) {
        return;
    }
    bool ok = false;
    const QString name =
        QInputDialog::getText(this, tr("Rename run"), tr("Name of run %1:").arg(run->id),
                              QLineEdit::Normal, qs(run->name), &ok);
    if (ok && !name.trimmed().isEmpty()) {
        m_model->setData(m_model->index(row, RunsModel::Name), name.trimmed());
    }
}

void RunsPage::exportSelected() {
    const QVector<qint64> ids = selectedRunIds();
    if (ids.isEmpty() || !m_database->isOpen()) {
        return;
    }
    const QString dir = AppSettings::value(QStringLiteral("export/lastDir")).toString();
    const QString suggested = ids.size() == 1 ? QStringLiteral("run%1.json").arg(ids.front())
                                              : QStringLiteral("runs.json");
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export runs"), dir.isEmpty() ? suggested : dir + QLatin1Char('/') + suggested,
        tr("Run with metrics and events (*.json);;Metrics (*.csv)"));
    if (path.isEmpty()) {
        return;
    }
    AppSettings::setValue(QStringLiteral("export/lastDir"), QFileInfo(path).absolutePath());
    const QString error = exportRuns(m_database->store(), ids, path);
    if (!error.isEmpty()) {
        QMessageBox::warning(this, tr("Export runs"), error);
    }
}

void RunsPage::sendSelected() {
    const QVector<qint64> ids = selectedRunIds();
    if (ids.isEmpty() || !m_database->isOpen()) {
        return;
    }
    TrackerDialog dialog(ids.size(), this);
    dialog.sendWith(m_sender, m_database->path(), ids);
    m_sendDialog = &dialog;
    const bool sent = dialog.exec() == QDialog::Accepted;
    m_sendDialog = nullptr;
    if (sent) {
        QMessageBox::information(this, tr("Send to tracker"), dialog.report());
    }
}

void RunsPage::showSent(const QString& report, bool failed, bool interactive) {
    m_lastSendReport = report;
    if (!interactive || m_sendDialog) {
        return;  // the window tells of sends after a run ended; the open dialog of its own
    }
    if (failed) {
        QMessageBox::warning(this, tr("Send to tracker"), report);
    } else {
        QMessageBox::information(this, tr("Send to tracker"), report);
    }
}

void RunsPage::fitColumns() {
    m_columns->fit();
}

void RunsPage::setPresenting(bool on) {
    m_columns->setLeavingOut(on);
}

void RunsPage::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        fitColumns();  // widths of the old text size clipped the headings ("Datase")
    }
}

bool RunsPage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_notes && event->type() == QEvent::FocusOut) {
        saveNotes();
    }
    return QWidget::eventFilter(watched, event);
}

void RunsPage::saveNotes() {
    if (m_notesRunId == 0) {
        return;
    }
    const int row = m_model->rowOfRun(m_notesRunId);
    const RunRecord* run = m_model->run(row);
    if (run && qs(run->notes) != m_notes->toPlainText()) {
        m_model->setData(m_model->index(row, RunsModel::Notes), m_notes->toPlainText());
    }
}

QVector<qint64> RunsPage::runWithItsFixes(qint64 runId) const {
    const RunStore& store = m_database->store();
    const std::optional<RunRecord> run = store.find_run(runId);
    const std::int64_t fixed =
        run && run->fix_of && store.find_run(*run->fix_of) ? *run->fix_of : runId;
    QVector<qint64> ids{fixed};
    for (const RunRecord& tried : store.fix_runs_of(fixed)) {
        ids.push_back(tried.id);
    }
    if (!ids.contains(runId)) {
        ids.push_back(runId);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

QString RunsPage::detailsText() const {
    return m_details->text();
}

QString RunsPage::fixesHtml(const RunRecord& run) const {
    QString html;
    if (run.fix_of) {
        html += QStringLiteral("<br>") + fixOutcomeText(m_database->store(), run).toHtmlEscaped();
    }
    if (run.fixes_json.empty()) {
        return html;
    }
    std::vector<OomFix> offered;
    try {
        offered = parse_oom_fixes_json(run.fixes_json, "run " + std::to_string(run.id));
    } catch (const std::exception& error) {
        return html + QStringLiteral("<br>") + qs(error.what()).toHtmlEscaped();
    }
    html += offered.empty() ? tr("<br>No change was predicted to fit.")
                            : tr("<br><b>Fixes offered</b> (each predicted to fit):");
    for (const OomFix& fix : offered) {
        QStringList settings;
        for (const auto& [key, value] : fix.set) {
            settings << QStringLiteral("%1=%2").arg(qs(key), qs(value));
        }
        html += QStringLiteral("<br>• %1 — predicted %2")
                    .arg(settings.join(QStringLiteral(", ")).toHtmlEscaped(),
                         formatBytes(fix.predicted_peak_bytes));
    }
    for (const RunRecord& tried : m_database->store().fix_runs_of(run.id)) {
        html += tr("<br>Tried in run %1 (%2): %3, %4")
                    .arg(tried.id)
                    .arg(qs(tried.name).toHtmlEscaped(), statusName(tried.outcome.status),
                         qs(tried_fix_figures(run, tried, offered)).toHtmlEscaped());
    }
    return html;
}

void RunsPage::updateDetails() {
    saveNotes();
    const QVector<qint64> ids = selectedRunIds();
    m_compare->setEnabled(!ids.isEmpty());
    m_rerun->setEnabled(ids.size() == 1);
    m_delete->setEnabled(!ids.isEmpty());
    m_export->setEnabled(!ids.isEmpty());
    m_sendToTracker->setEnabled(!ids.isEmpty());
    const RunRecord* run = ids.size() == 1 ? m_model->run(m_model->rowOfRun(ids.front())) : nullptr;
    m_notes->setEnabled(run != nullptr);
    if (!run) {
        m_notesRunId = 0;
        m_notes->clear();
        m_details->setText(ids.isEmpty() ? tr("Select runs to see details; select two or more and "
                                              "press Compare.")
                                         : tr("%n runs selected.", nullptr, ids.size()));
        return;
    }
    QString text =
        tr("<b>%1</b> (run %2) — <span style='color:%3'>%4</span><br>%5 · engine %6, "
           "LibTorch %7<br>created %8, finished %9")
            .arg(qs(run->name).toHtmlEscaped())
            .arg(run->id)
            .arg(statusColor(run->outcome.status).name(), statusName(run->outcome.status),
                 qs(run->device).toHtmlEscaped(), qs(run->engine_version), qs(run->torch_version),
                 qs(run->created_at), qs(run->finished_at));
    if (!run->outcome.error.empty()) {
        text += QStringLiteral("<br>") + qs(run->outcome.error).toHtmlEscaped();
    }
    text += fixesHtml(*run);
    m_details->setText(text);
    if (m_notesRunId != run->id) {
        m_notesRunId = run->id;
        m_notes->setPlainText(qs(run->notes));
    }
}

}  // namespace oomlab::ui
