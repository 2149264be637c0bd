with AUnit.Test_Suites;

package Body_Suites is

   function All_Tests return AUnit.Test_Suites.Access_Test_Suite;

end Body_Suites;
