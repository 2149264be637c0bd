--  Loading and checking an organ fixture (JSON).  Everything a stub organ
--  will ever answer is read and checked here, at start-up, so a bad fixture
--  refuses to start instead of failing in the middle of a turn.  The
--  fixture is read with the body's own JSON reader, after the same guard as
--  protocol lines.

package Stub_Organs.Fixtures is

   function Load (Path : String) return Fixture
   with Post => Energy_Gate.Is_Valid (Curve (Load'Result));
   --  Raises Fixture_Error naming Path and the offending field

   function Parse_Curve (Text : String) return Energy_Gate.Threshold_Curve
   with Post => Energy_Gate.Is_Valid (Parse_Curve'Result);
   --  Eight comma-separated thresholds (the --thresholds option); raises
   --  Fixture_Error when they do not form a valid curve

end Stub_Organs.Fixtures;
