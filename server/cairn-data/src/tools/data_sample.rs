//! `data_sample`: a uniform random sample of a data file's rows (reservoir sampling over the
//! streamed file, so any size works in bounded memory), reproducible with a seed.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use datafusion::arrow::array::{RecordBatch, UInt32Array};
use datafusion::arrow::compute::{concat_batches, take_record_batch};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::{Flow, Rows};
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_sample` tool.
pub struct DataSample;

/// Arguments of `data_sample`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// How many rows (default 20, at most 200).
    n: Option<usize>,
    /// The random seed; the same seed gives the same sample (default 42).
    seed: Option<u64>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataSample {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_sample";
    const TITLE: &'static str = "Random sample of rows";
    const DESCRIPTION: &'static str = "Draw a uniform random sample of rows from a data file of any size (reproducible with a seed), in file order; a better view of the data than its first rows.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        let session = match data
            .one(&args.file, args.sheet.as_deref(), &cx.cancel)
            .await
        {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let n = args.n.unwrap_or(20).clamp(1, data.limits.table.max_rows);
        let df = match session
            .plan(&format!(
                "SELECT * FROM t{}",
                where_clause(args.filter.as_deref())
            ))
            .await
        {
            Ok(df) => df,
            Err(e) => return failed(&e),
        };
        let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
        let mut reservoir = Reservoir::new(n, args.seed.unwrap_or(42));
        let result = session
            .each_batch(df, |b| reservoir.offer(b).map(|()| Flow::More))
            .await;
        if let Err(e) = result {
            return failed(&e);
        }
        let seen = reservoir.seen;
        let batch = match reservoir.finish(&schema) {
            Ok(b) => b,
            Err(e) => return failed(&e),
        };
        let rows = Rows {
            schema,
            batches: vec![batch],
            more: false,
        };
        shown(
            &session,
            &rows,
            &format!("{} rows sampled from {seen}:", rows.len()),
            &data.limits,
            "ask for fewer rows",
        )
    }
}

/// Algorithm R over a stream of batches, keeping copies of the chosen rows (never the batches
/// they came from) with their position, so the sample is returned in file order.
struct Reservoir {
    n: usize,
    rng: u64,
    seen: u64,
    kept: Vec<(u64, RecordBatch)>,
}

impl Reservoir {
    fn new(n: usize, seed: u64) -> Reservoir {
        Reservoir {
            n,
            rng: seed ^ 0x9E37_79B9_7F4A_7C15,
            seen: 0,
            kept: Vec::with_capacity(n),
        }
    }

    /// splitmix64: small, seedable, good enough for sampling.
    fn next(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn offer(&mut self, batch: &RecordBatch) -> Result<(), DataError> {
        let mut picks: Vec<(usize, Option<usize>)> = Vec::new();
        for row in 0..batch.num_rows() {
            self.seen += 1;
            if self.kept.len() + picks.iter().filter(|p| p.1.is_none()).count() < self.n {
                picks.push((row, None));
            } else {
                let j = self.next() % self.seen;
                if let Ok(j) = usize::try_from(j)
                    && j < self.n
                {
                    picks.push((row, Some(j)));
                }
            }
        }
        for (row, slot) in picks {
            let index = UInt32Array::from(vec![u32::try_from(row).unwrap_or(u32::MAX)]);
            let one =
                take_record_batch(batch, &index).map_err(|e| DataError::Query(e.to_string()))?;
            let position = self.seen - (batch.num_rows() - row) as u64;
            match slot {
                None => self.kept.push((position, one)),
                Some(j) => {
                    if let Some(k) = self.kept.get_mut(j) {
                        *k = (position, one);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(
        mut self,
        schema: &datafusion::arrow::datatypes::SchemaRef,
    ) -> Result<RecordBatch, DataError> {
        self.kept.sort_by_key(|(p, _)| *p);
        let batches: Vec<RecordBatch> = self.kept.into_iter().map(|(_, b)| b).collect();
        concat_batches(schema, &batches).map_err(|e| DataError::Query(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    #[test]
    fn the_reservoir_keeps_n_distinct_rows_in_order_and_repeats_with_a_seed() {
        let schema = Arc::new(Schema::new(vec![Field::new("i", DataType::Int64, false)]));
        let run = |seed| {
            let mut r = Reservoir::new(10, seed);
            for k in 0..100 {
                let values: Vec<i64> = (k * 1000..(k + 1) * 1000).collect();
                let b =
                    RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(values))])
                        .unwrap();
                r.offer(&b).unwrap();
            }
            let b = r.finish(&schema).unwrap();
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            a.values().to_vec()
        };
        let s = run(7);
        assert_eq!(s.len(), 10);
        assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
        assert_eq!(s, run(7));
        assert_ne!(s, run(8));
        // Uniform: the sample is not just the first rows.
        assert!(s.iter().any(|v| *v > 10_000), "{s:?}");
    }
}
