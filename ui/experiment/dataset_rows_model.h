// The first examples of a dataset as a table: label and text, the whole text as a tooltip.
#pragma once

#include <QAbstractTableModel>
#include <QPair>
#include <QVector>

namespace oomlab::ui {

class DatasetRowsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Label, Text };

    explicit DatasetRowsModel(QObject* parent = nullptr);

    void setRows(const QVector<QPair<QString, QString>>& rows);  // label, text

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QVector<QPair<QString, QString>> m_rows;
};

}  // namespace oomlab::ui
