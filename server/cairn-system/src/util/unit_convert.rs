//! `unit_convert`: a value from one unit to another of the same kind (length, mass, time,
//! temperature, data sizes, speed, area, volume, pressure, energy, power). Data sizes keep SI
//! (kB = 1000 B) and binary (KiB = 1024 B) apart; units of different kinds are refused.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::calculate::{Num, show};

/// The `unit_convert` tool.
pub struct UnitConvert;

/// Arguments of `unit_convert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The value to convert.
    value: f64,
    /// Its unit, e.g. km, mi, lb, kg, °C, F, KiB, MB, Mbit, km/h, mph, m2, acre, L, gal, psi,
    /// bar, kWh, kcal, hp. Data units are case-sensitive: B is bytes, b bits; kB/KB are 1000
    /// bytes, KiB 1024.
    from: String,
    /// The unit to convert to (the same kind as `from`).
    to: String,
}

/// What a unit measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Length,
    Mass,
    Time,
    Temperature,
    Data,
    Speed,
    Area,
    Volume,
    Pressure,
    Energy,
    Power,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Length => "length",
            Kind::Mass => "mass",
            Kind::Time => "time",
            Kind::Temperature => "temperature",
            Kind::Data => "data size",
            Kind::Speed => "speed",
            Kind::Area => "area",
            Kind::Volume => "volume",
            Kind::Pressure => "pressure",
            Kind::Energy => "energy",
            Kind::Power => "power",
        }
    }
}

/// One unit: its spellings, its kind, and `base = value * factor + offset` (the base unit of
/// each kind is SI: m, kg, s, K, byte, m/s, m², m³, Pa, J, W).
struct Unit {
    names: &'static [&'static str],
    kind: Kind,
    factor: f64,
    offset: f64,
}

const fn u(names: &'static [&'static str], kind: Kind, factor: f64) -> Unit {
    Unit {
        names,
        kind,
        factor,
        offset: 0.0,
    }
}

use Kind::*;

const UNITS: &[Unit] = &[
    // length
    u(&["m", "meter", "meters", "metre", "metres"], Length, 1.0),
    u(
        &["km", "kilometer", "kilometers", "kilometre", "kilometres"],
        Length,
        1000.0,
    ),
    u(
        &[
            "cm",
            "centimeter",
            "centimeters",
            "centimetre",
            "centimetres",
        ],
        Length,
        0.01,
    ),
    u(
        &[
            "mm",
            "millimeter",
            "millimeters",
            "millimetre",
            "millimetres",
        ],
        Length,
        0.001,
    ),
    u(
        &["um", "µm", "micrometer", "micrometers", "micron", "microns"],
        Length,
        1e-6,
    ),
    u(&["nm", "nanometer", "nanometers"], Length, 1e-9),
    u(&["in", "inch", "inches", "\""], Length, 0.0254),
    u(&["ft", "foot", "feet", "'"], Length, 0.3048),
    u(&["yd", "yard", "yards"], Length, 0.9144),
    u(&["mi", "mile", "miles"], Length, 1609.344),
    u(&["nmi", "nautical mile", "nautical miles"], Length, 1852.0),
    u(&["au", "astronomical unit"], Length, 149_597_870_700.0),
    u(
        &["ly", "light year", "light years", "lightyear"],
        Length,
        9_460_730_472_580_800.0,
    ),
    // mass
    u(&["kg", "kilogram", "kilograms", "kilo", "kilos"], Mass, 1.0),
    u(&["g", "gram", "grams"], Mass, 0.001),
    u(&["mg", "milligram", "milligrams"], Mass, 1e-6),
    u(&["ug", "µg", "microgram", "micrograms"], Mass, 1e-9),
    u(&["t", "tonne", "tonnes", "metric ton"], Mass, 1000.0),
    u(&["lb", "lbs", "pound", "pounds"], Mass, 0.453_592_37),
    u(&["oz", "ounce", "ounces"], Mass, 0.028_349_523_125),
    u(&["st", "stone", "stones"], Mass, 6.350_293_18),
    u(&["ton", "short ton", "us ton"], Mass, 907.184_74),
    u(&["long ton", "uk ton"], Mass, 1_016.046_908_8),
    // time
    u(&["s", "sec", "secs", "second", "seconds"], Time, 1.0),
    u(&["ms", "millisecond", "milliseconds"], Time, 0.001),
    u(&["us", "µs", "microsecond", "microseconds"], Time, 1e-6),
    u(&["ns", "nanosecond", "nanoseconds"], Time, 1e-9),
    u(&["min", "mins", "minute", "minutes"], Time, 60.0),
    u(&["h", "hr", "hrs", "hour", "hours"], Time, 3600.0),
    u(&["d", "day", "days"], Time, 86_400.0),
    u(&["wk", "week", "weeks"], Time, 604_800.0),
    u(&["yr", "year", "years"], Time, 31_557_600.0),
    // temperature (offsets to kelvin)
    Unit {
        names: &["K", "kelvin"],
        kind: Temperature,
        factor: 1.0,
        offset: 0.0,
    },
    Unit {
        names: &["°C", "C", "degC", "celsius"],
        kind: Temperature,
        factor: 1.0,
        offset: 273.15,
    },
    Unit {
        names: &["°F", "F", "degF", "fahrenheit"],
        kind: Temperature,
        factor: 5.0 / 9.0,
        offset: 273.15 - 32.0 * 5.0 / 9.0,
    },
    Unit {
        names: &["°R", "R", "rankine"],
        kind: Temperature,
        factor: 5.0 / 9.0,
        offset: 0.0,
    },
    // data (bytes; SI prefixes are powers of 1000, IEC ones powers of 1024)
    u(&["B", "byte", "bytes"], Data, 1.0),
    u(&["b", "bit", "bits"], Data, 0.125),
    u(&["kB", "KB", "kilobyte", "kilobytes"], Data, 1e3),
    u(&["MB", "megabyte", "megabytes"], Data, 1e6),
    u(&["GB", "gigabyte", "gigabytes"], Data, 1e9),
    u(&["TB", "terabyte", "terabytes"], Data, 1e12),
    u(&["PB", "petabyte", "petabytes"], Data, 1e15),
    u(&["KiB", "kibibyte", "kibibytes"], Data, 1024.0),
    u(&["MiB", "mebibyte", "mebibytes"], Data, 1_048_576.0),
    u(&["GiB", "gibibyte", "gibibytes"], Data, 1_073_741_824.0),
    u(&["TiB", "tebibyte", "tebibytes"], Data, 1_099_511_627_776.0),
    u(
        &["PiB", "pebibyte", "pebibytes"],
        Data,
        1_125_899_906_842_624.0,
    ),
    u(&["kb", "Kb", "kbit", "kilobit", "kilobits"], Data, 125.0),
    u(&["Mb", "Mbit", "megabit", "megabits"], Data, 125_000.0),
    u(&["Gb", "Gbit", "gigabit", "gigabits"], Data, 125_000_000.0),
    u(&["Kib", "Kibit", "kibibit", "kibibits"], Data, 128.0),
    u(&["Mib", "Mibit", "mebibit", "mebibits"], Data, 131_072.0),
    // speed
    u(&["m/s", "mps"], Speed, 1.0),
    u(&["km/h", "kmh", "kph"], Speed, 1000.0 / 3600.0),
    u(&["mph", "mi/h"], Speed, 1609.344 / 3600.0),
    u(&["ft/s", "fps"], Speed, 0.3048),
    u(&["kn", "knot", "knots", "kt"], Speed, 1852.0 / 3600.0),
    u(&["c", "speed of light"], Speed, 299_792_458.0),
    // area
    u(
        &[
            "m2",
            "m²",
            "sq m",
            "square meter",
            "square meters",
            "square metre",
        ],
        Area,
        1.0,
    ),
    u(
        &[
            "km2",
            "km²",
            "sq km",
            "square kilometer",
            "square kilometers",
        ],
        Area,
        1e6,
    ),
    u(&["cm2", "cm²", "square centimeter"], Area, 1e-4),
    u(&["mm2", "mm²", "square millimeter"], Area, 1e-6),
    u(&["ha", "hectare", "hectares"], Area, 1e4),
    u(&["a", "are", "ares"], Area, 100.0),
    u(&["acre", "acres", "ac"], Area, 4_046.856_422_4),
    u(
        &["ft2", "ft²", "sq ft", "square foot", "square feet"],
        Area,
        0.092_903_04,
    ),
    u(
        &["in2", "in²", "sq in", "square inch", "square inches"],
        Area,
        0.000_645_16,
    ),
    u(
        &["yd2", "yd²", "sq yd", "square yard", "square yards"],
        Area,
        0.836_127_36,
    ),
    u(
        &["mi2", "mi²", "sq mi", "square mile", "square miles"],
        Area,
        2_589_988.110_336,
    ),
    // volume
    u(
        &["m3", "m³", "cubic meter", "cubic meters", "cubic metre"],
        Volume,
        1.0,
    ),
    u(
        &["L", "l", "liter", "liters", "litre", "litres"],
        Volume,
        0.001,
    ),
    u(
        &["mL", "ml", "milliliter", "milliliters", "millilitre"],
        Volume,
        1e-6,
    ),
    u(&["cL", "cl", "centiliter", "centilitre"], Volume, 1e-5),
    u(&["dL", "dl", "deciliter", "decilitre"], Volume, 1e-4),
    u(&["cm3", "cm³", "cc"], Volume, 1e-6),
    u(
        &["gal", "gallon", "gallons", "us gal"],
        Volume,
        0.003_785_411_784,
    ),
    u(
        &["imp gal", "uk gal", "imperial gallon"],
        Volume,
        0.004_546_09,
    ),
    u(&["qt", "quart", "quarts"], Volume, 0.000_946_352_946),
    u(&["pt", "pint", "pints"], Volume, 0.000_473_176_473),
    u(&["cup", "cups"], Volume, 0.000_236_588_236_5),
    u(
        &["fl oz", "floz", "fluid ounce", "fluid ounces"],
        Volume,
        0.000_029_573_529_562_5,
    ),
    u(
        &["tbsp", "tablespoon", "tablespoons"],
        Volume,
        0.000_014_786_764_781_25,
    ),
    u(
        &["tsp", "teaspoon", "teaspoons"],
        Volume,
        0.000_004_928_921_593_75,
    ),
    u(
        &["ft3", "ft³", "cu ft", "cubic foot", "cubic feet"],
        Volume,
        0.028_316_846_592,
    ),
    u(
        &["in3", "in³", "cu in", "cubic inch", "cubic inches"],
        Volume,
        0.000_016_387_064,
    ),
    u(
        &["bbl", "barrel", "barrels", "oil barrel"],
        Volume,
        0.158_987_294_928,
    ),
    // pressure
    u(&["Pa", "pascal", "pascals"], Pressure, 1.0),
    u(&["hPa", "hectopascal", "hectopascals"], Pressure, 100.0),
    u(&["kPa", "kilopascal", "kilopascals"], Pressure, 1000.0),
    u(&["MPa", "megapascal", "megapascals"], Pressure, 1e6),
    u(&["bar", "bars"], Pressure, 1e5),
    u(&["mbar", "millibar", "millibars"], Pressure, 100.0),
    u(&["atm", "atmosphere", "atmospheres"], Pressure, 101_325.0),
    u(&["psi"], Pressure, 6_894.757_293_168_361),
    u(&["mmHg", "torr", "Torr"], Pressure, 133.322_387_415),
    u(&["inHg"], Pressure, 3386.389),
    // energy
    u(&["J", "joule", "joules"], Energy, 1.0),
    u(&["kJ", "kilojoule", "kilojoules"], Energy, 1000.0),
    u(&["MJ", "megajoule", "megajoules"], Energy, 1e6),
    u(&["cal", "calorie", "calories"], Energy, 4.184),
    u(
        &["kcal", "Cal", "kilocalorie", "kilocalories"],
        Energy,
        4184.0,
    ),
    u(&["Wh", "watt hour", "watt hours"], Energy, 3600.0),
    u(&["kWh", "kilowatt hour", "kilowatt hours"], Energy, 3.6e6),
    u(&["MWh", "megawatt hour", "megawatt hours"], Energy, 3.6e9),
    u(
        &["eV", "electronvolt", "electronvolts"],
        Energy,
        1.602_176_634e-19,
    ),
    u(&["BTU", "btu"], Energy, 1_055.055_852_62),
    u(&["ft lbf", "foot pound"], Energy, 1.355_817_948_331_400_4),
    // power
    u(&["W", "watt", "watts"], Power, 1.0),
    u(&["kW", "kilowatt", "kilowatts"], Power, 1000.0),
    u(&["MW", "megawatt", "megawatts"], Power, 1e6),
    u(&["hp", "horsepower"], Power, 745.699_871_582_270_2),
    u(&["PS", "metric horsepower"], Power, 735.498_75),
];

/// The unit spelled `name`: exactly, else case-insensitively when that is unambiguous.
fn find(name: &str) -> Result<&'static Unit, String> {
    let n = name.trim();
    let n = n
        .strip_prefix("deg ")
        .map_or(n.to_owned(), |t| format!("deg{t}"));
    if let Some(unit) = UNITS.iter().find(|u| u.names.contains(&n.as_str())) {
        return Ok(unit);
    }
    let matches: Vec<&Unit> = UNITS
        .iter()
        .filter(|u| u.names.iter().any(|x| x.eq_ignore_ascii_case(&n)))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "unknown unit `{name}`: use a symbol or name such as km, lb, °C, MiB, km/h, m2, L, psi, kWh, hp"
        )),
        many => Err(format!(
            "`{name}` is ambiguous (case matters here): {}",
            many.iter()
                .map(|u| format!(
                    "{} ({})",
                    u.names.first().copied().unwrap_or_default(),
                    u.names.get(1).copied().unwrap_or_default()
                ))
                .collect::<Vec<_>>()
                .join(" or ")
        )),
    }
}

/// `value` in `from` converted to `to`, or why not.
pub(crate) fn convert(value: f64, from: &str, to: &str) -> Result<f64, String> {
    let a = find(from)?;
    let b = find(to)?;
    if a.kind != b.kind {
        return Err(format!(
            "cannot convert {} ({from}) to {} ({to}): different kinds of quantity",
            a.kind.name(),
            b.kind.name()
        ));
    }
    let base = value * a.factor + a.offset;
    if a.kind == Kind::Temperature && base < 0.0 {
        return Err(format!(
            "{value} {from} is below absolute zero (0 K = -273.15 °C = -459.67 °F)"
        ));
    }
    let out = (base - b.offset) / b.factor;
    if out.is_finite() {
        Ok(out)
    } else {
        Err("the result is too large for a double".to_owned())
    }
}

impl Tool for UnitConvert {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "unit_convert";
    const TITLE: &'static str = "Convert units";
    const DESCRIPTION: &'static str = "Convert a value between units of length, mass, time, temperature, data size (kB = 1000 B vs KiB = 1024 B; B bytes vs b bits), speed, area, volume, pressure, energy and power; units of different kinds are refused.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        if !args.value.is_finite() {
            return error("the value must be a finite number");
        }
        match convert(args.value, &args.from, &args.to) {
            Ok(v) => {
                let mut out = format!(
                    "{} {} = {} {}",
                    show(Num::Float(args.value)),
                    args.from.trim(),
                    show(Num::Float(v)),
                    args.to.trim()
                );
                if find(&args.from).is_ok_and(|u| u.kind == Kind::Data) {
                    out.push_str("\n(kB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024; b is a bit, B a byte)");
                }
                text(out)
            }
            Err(e) => error(e),
        }
    }
}
