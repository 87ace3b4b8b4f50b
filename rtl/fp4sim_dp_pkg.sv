// Datapath types shared by the units (hand-written; the format tables are in the generated
// fp4sim_pkg). yosys 0.23 resolves package enums in modules but not inside package functions, so
// the outcome is applied by a module (fp4sim_special_apply), not a function here.
package fp4sim_dp_pkg;

  // Special-value outcome of an accumulate, decided from the operands before the datapath result.
  typedef enum logic [1:0] {
    SpFinite = 2'd0,  // the datapath's result
    SpNan    = 2'd1,  // canonical NaN 0x7FFFFFFF
    SpPosInf = 2'd2,
    SpNegInf = 2'd3
  } special_e;

  // NVFP4 PE back end (nvfp4_pe64 #(.BackEnd)): how the exact fixed-point term meets C.
  localparam int unsigned BeNormalize = 0;  // normalize both operands, align, add, normalize
  localparam int unsigned BeFixed     = 1;  // C into the term's fixed-point frame, one normalize

endpackage
