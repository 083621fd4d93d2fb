// Every config key (rows) of each compared run (columns); the rows whose values differ
// between the runs are marked (bold, tinted) and listed by differingKeys().
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>
#include <QVector>

#include "compare/compare_data.h"

namespace oomlab::ui {

class SettingsDiffModel : public QAbstractTableModel {
    Q_OBJECT

public:
    explicit SettingsDiffModel(QObject* parent = nullptr);

    void setRuns(const QVector<CompareRun>& runs);
    // The tint of a differing row (the palette's highlight, faint).
    void setHighlight(const QColor& color) { m_highlight = color; }

    QStringList differingKeys() const;
    bool rowDiffers(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString key;
        QString help;
        QStringList values;  // one per run; "?" where the run's config could not be read
        bool differs = false;
    };
    QVector<Row> m_rows;
    QStringList m_runLabels;
    QColor m_highlight;
};

}  // namespace oomlab::ui
